// Writes a build output so a reader never sees half of it: another process (vitest, a second
// `wrangler dev`) may build the same file at the same time (scripts/build.mjs).
import { mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'

/** Writes `text` to a temporary file beside `path`, then renames it over `path`. */
export function writeAtomic(path, text) {
  mkdirSync(dirname(path), { recursive: true })
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`
  writeFileSync(temporary, text)
  renameSync(temporary, path)
}
