// The one Node API vitest.config.ts uses (the project has no @types/node: code runs in workerd).
declare module 'node:fs/promises' {
  export function readFile(path: string, encoding: 'utf8'): Promise<string>
}
