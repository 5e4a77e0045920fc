#!/usr/bin/env node
// `npm run lint:openapi`: writes /openapi.json as the Worker serves it and lints it with Redocly's
// recommended rules (no errors; no warnings but those scripts/openapi-lint-ignore.yaml
// accepts, with its reasons). Extra arguments go to `redocly lint` (`--format=json`).
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { importTs } from '../bench/import-ts.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const { app } = await importTs('../src/routes/app.ts')
// The document as the app answers GET /openapi.json (no settings needed: it is built from code).
const served = await app.request(`https://edgeloop.workers.dev/openapi.json`, {}, {})
if (served.status !== 200) throw new Error(`/openapi.json answered ${served.status}`)
const document = await served.json()
const dir = mkdtempSync(join(tmpdir(), 'edgeloop-openapi-'))
try {
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document, null, 2))
  // Redocly reads the ignore file from its working directory (there is no redocly.yaml).
  copyFileSync(
    join(root, 'scripts/openapi-lint-ignore.yaml'),
    join(dir, '.redocly.lint-ignore.yaml'),
  )
  const res = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules/@redocly/cli/bin/cli.js'),
      'lint',
      'openapi.json',
      ...process.argv.slice(2),
    ],
    {
      cwd: dir,
      stdio: 'inherit',
      // A lint reaches no host: no usage report to Redocly, no update check.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  )
  process.exitCode = res.status ?? 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
