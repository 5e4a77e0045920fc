declare module '*?raw' {
  const text: string
  export default text
}

// Vite's `import.meta.glob`, which the import-graph test uses to read every module as text.
interface ImportMeta {
  glob: import('vite/types/importGlob').ImportGlobFunction
}
