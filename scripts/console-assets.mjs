// The web console's files (src/console/, where they are strings) written out as Workers Static
// Assets: they leave the Worker's script, and the Worker serves them from the ASSETS binding with
// its own headers (src/routes/console.ts). A file is written only when its bytes changed, so
// `wrangler dev` does not reload for nothing.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeAtomic } from './write-atomic.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** wrangler.toml's `[assets] directory`. */
export const ASSETS_DIR = join(root, 'dist', 'assets')

/** Each file under ASSETS_DIR and the export of src/console/ it holds. */
export const CONSOLE_FILES = {
  'console/index.html': ['console-page', 'CONSOLE_HTML'],
  'console/console.js': ['console-script', 'CONSOLE_SCRIPT'],
  'console/console.css': ['console-style', 'CONSOLE_CSS'],
  'console/favicon.svg': ['console-favicon', 'CONSOLE_FAVICON'],
}

/** Writes the console's files under ASSETS_DIR; returns the directory. */
export async function buildConsoleAssets() {
  const esbuild = createRequire(join(root, 'node_modules', 'wrangler', 'package.json'))('esbuild')
  const entries = Object.values(CONSOLE_FILES)
  const result = await esbuild.build({
    stdin: {
      contents: entries.map(([file, name]) => `export { ${name} } from './${file}'`).join('\n'),
      resolveDir: join(root, 'src', 'console'),
      loader: 'ts',
    },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    write: false,
    logLevel: 'silent',
  })
  const code = Buffer.from(result.outputFiles[0].contents).toString('base64')
  const strings = await import(`data:text/javascript;base64,${code}`)
  for (const [path, [, name]] of Object.entries(CONSOLE_FILES)) {
    const text = strings[name]
    if (typeof text !== 'string') throw new Error(`src/console: ${name} is not a string export`)
    const file = join(ASSETS_DIR, path)
    let current
    try {
      current = readFileSync(file, 'utf8')
    } catch {}
    if (current === text) continue
    writeAtomic(file, text)
  }
  return ASSETS_DIR
}
