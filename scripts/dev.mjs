#!/usr/bin/env node
// `npm start`: the service on wrangler dev (local Durable Object storage in .wrangler/), with the
// offline demo model unless .dev.vars sets OPENAI_API_KEY.
import { spawn } from 'node:child_process'
import { copyFileSync, existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const vars = join(root, '.dev.vars')
if (!existsSync(vars)) {
  copyFileSync(join(root, '.dev.vars.example'), vars)
  console.log('created .dev.vars from .dev.vars.example (API_TOKEN=dev-token)')
}
const port = process.env.PORT ?? '8787'
const wrangler = join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js')
const child = spawn(
  process.execPath,
  [
    wrangler,
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    port,
    '--show-interactive-dev-session=false',
    ...process.argv.slice(2),
  ],
  { cwd: root, stdio: 'inherit', env: { ...process.env, WRANGLER_SEND_METRICS: 'false' } },
)
console.log(
  `edgeloop: http://127.0.0.1:${port}  (try: curl http://127.0.0.1:${port}/healthz; the README walks through the demo)`,
)
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig))
child.on('exit', (code) => process.exit(code ?? 0))
