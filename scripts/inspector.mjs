#!/usr/bin/env node
// `npm run inspector -- <url> --transport http --header "Authorization: Bearer $TOKEN" --method …`:
// the MCP Inspector's command line (@modelcontextprotocol/inspector-cli, pinned in package.json)
// in its `--cli` mode, against /mcp (docs/serving.md#step-by-step-connecting-an-mcp-client).
// It runs from the CLI's build folder: 1.0.3 checks for its package.json with a path relative to
// the working directory but imports it relative to its own module, so from anywhere else it fails
// with "Cannot find module …/@modelcontextprotocol/package.json".
import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const build = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  'node_modules',
  '@modelcontextprotocol',
  'inspector-cli',
  'build',
)
const child = spawn(process.execPath, [join(build, 'cli.js'), '--cli', ...process.argv.slice(2)], {
  cwd: build,
  stdio: 'inherit',
})
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
