// For vitest.config.ts: wrangler.toml, copied where no `.dev.vars` or `.env` lies beside it.
// wrangler reads those from the config's folder and the vitest plugin has no switch to skip
// them, so a developer's local settings (say MODEL_PROTOCOL=text) would change what the tests
// see. The paths it names (`main`, `[build]`'s `cwd` and `watch_dir`, `[assets]`'s `directory`,
// the `[alias]` targets) are made absolute.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeAtomic } from './write-atomic.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Writes the copy (under node_modules/.cache) and returns its path. */
export function wranglerConfigWithoutDevVars() {
  // One folder per checkout: a copy of the project that links this node_modules
  // (test/node/own-agent.test.ts) writes its own, not over the one other test files are reading.
  const checkout = createHash('sha256').update(root).digest('hex').slice(0, 12)
  const dir = join(root, 'node_modules', '.cache', 'edgeloop-test', checkout)
  mkdirSync(dir, { recursive: true })
  const source = readFileSync(join(root, 'wrangler.toml'), 'utf8')
  const main = /^main = "(.+)"$/m
  if (!main.test(source)) throw new Error('wrangler.toml: no `main = "…"` line to make absolute')
  const toml = source
    .replace(main, (_, file) => `main = ${JSON.stringify(resolve(root, file))}`)
    .replace(
      /^(cwd|directory) = "(.+)"$/gm,
      (_, key, dir) => `${key} = ${JSON.stringify(resolve(root, dir))}`,
    )
    .replace(/^watch_dir = \[(.*)\]$/m, (_, dirs) => {
      const list = [...dirs.matchAll(/"([^"]+)"/g)].map((m) => JSON.stringify(resolve(root, m[1])))
      return `watch_dir = [${list.join(', ')}]`
    })
    .replace(
      /^("[^"]+" = )"(\.\/[^"]+)"$/gm,
      (_, key, file) => `${key}${JSON.stringify(resolve(root, file))}`,
    )
  const path = join(dir, 'wrangler.toml')
  // Rewritten only when it changed, and whole: test files side by side (test/node/) start
  // `wrangler dev` on this copy while another file asks for it.
  let current
  try {
    current = readFileSync(path, 'utf8')
  } catch {
    current = undefined
  }
  if (current !== toml) writeAtomic(path, toml)
  return path
}
