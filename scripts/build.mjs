#!/usr/bin/env node
// What wrangler.toml's `[build] command` runs before `wrangler dev` and `wrangler deploy` bundle,
// and vitest.config.ts before the test Workers are built (docs/development.md#the-build):
//   - the `openai` package with stand-ins for what edgeloop never calls (slim-openai.mjs), which
//     `[alias]` puts in place of `openai`;
//   - the MCP SDK's Streamable HTTP transport without its OAuth client (slim-mcp.mjs), which
//     `[alias]` puts in place of `@modelcontextprotocol/sdk/client/streamableHttp.js`;
//   - the web console's files as static assets (console-assets.mjs), which `[assets]` serves.
// Each output is rewritten only when what it is made from changed.
import { fileURLToPath } from 'node:url'
import { buildConsoleAssets } from './console-assets.mjs'
import { buildSlimMcpTransport } from './slim-mcp.mjs'
import { buildSlimOpenAI } from './slim-openai.mjs'

/** Builds the three; resolves to their paths. */
export async function build() {
  const slimMcpTransport = buildSlimMcpTransport()
  const [slimOpenAI, assets] = await Promise.all([buildSlimOpenAI(), buildConsoleAssets()])
  return { slimOpenAI, slimMcpTransport, assets }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await build()
