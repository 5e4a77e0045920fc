// The module scripts/eval.mjs writes into the bundle: every eval file's default export.
declare module 'eval-files' {
  const files: { file: string; value: unknown }[]
  export default files
}
