#!/usr/bin/env node
// `npm run lint:openapi`: writes /openapi.json as the Worker serves it and lints it with Redocly's
// recommended rules (issue 15 §4: no errors).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { importTs } from '../bench/import-ts.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const { openApiDocument } = await importTs('../src/routes/openapi.ts')
const dir = mkdtempSync(join(tmpdir(), 'edgeloop-openapi-'))
try {
  const file = join(dir, 'openapi.json')
  writeFileSync(file, JSON.stringify(openApiDocument('https://edgeloop.workers.dev'), null, 2))
  const res = spawnSync(
    process.execPath,
    [join(root, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', file],
    { stdio: 'inherit' },
  )
  process.exitCode = res.status ?? 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
