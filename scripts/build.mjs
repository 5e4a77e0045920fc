#!/usr/bin/env node
// What wrangler.toml's `[build] command` runs before `wrangler dev` and `wrangler deploy` bundle,
// and vitest.config.ts before the test Workers are built (docs/development.md#the-build): the web
// console's files as static assets (console-assets.mjs), which `[assets]` serves. They are
// rewritten only when what they are made from changed.
import { readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildConsoleAssets } from './console-assets.mjs'

/** Builds the console's assets; resolves to their folder. */
export async function build() {
  const assets = await buildConsoleAssets()
  return { assets }
}

/** One line a file: what the build wrote and its size, for `npm run build`. */
export function describeAssets(dir) {
  const files = readdirSync(dir, { recursive: true })
    .map((name) => join(dir, String(name)))
    .filter((path) => statSync(path).isFile())
    .sort()
  const kib = (n) => `${(n / 1024).toFixed(1)} KiB`
  const sizes = files.map((path) => statSync(path).size)
  return [
    `edgeloop build: the console's assets in ${relative(process.cwd(), dir) || '.'} ` +
      `(${files.length} files, ${kib(sizes.reduce((a, b) => a + b, 0))})`,
    ...files.map((path, i) => `  ${relative(dir, path)}  ${kib(sizes[i])}`),
  ]
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { assets } = await build()
  console.log(describeAssets(assets).join('\n'))
}
