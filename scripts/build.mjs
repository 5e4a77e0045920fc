#!/usr/bin/env node
// What wrangler.toml's `[build] command` runs before `wrangler dev` and `wrangler deploy` bundle,
// and vitest.config.ts before the test Workers are built (docs/development.md#the-build): the web
// console's files as static assets (console-assets.mjs), which `[assets]` serves. They are
// rewritten only when what they are made from changed.
import { fileURLToPath } from 'node:url'
import { buildConsoleAssets } from './console-assets.mjs'

/** Builds the console's assets; resolves to their folder. */
export async function build() {
  const assets = await buildConsoleAssets()
  return { assets }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await build()
