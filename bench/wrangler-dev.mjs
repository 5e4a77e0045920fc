// Starts `wrangler dev` on 127.0.0.1 with its own throwaway storage, for the latency benchmarks.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readySeconds, ReadinessTimeout } from './verdict.mjs'

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
    srv.on('error', reject)
  })
}

/** Starts wrangler dev with `vars` (KEY → value) and waits for /healthz. Call stop() when done. */
/** `config`: a wrangler.toml other than root's (e.g. one with no .dev.vars beside it). */
export async function startWranglerDev(root, vars, { timeoutMs = 60_000, config } = {}) {
  const port = await freePort()
  const persist = mkdtempSync(join(tmpdir(), 'edgeloop-dev-'))
  const args = [
    join(root, 'node_modules/wrangler/bin/wrangler.js'),
    'dev',
    ...(config ? ['--config', config] : []),
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--persist-to',
    persist,
    '--show-interactive-dev-session=false',
    '--log-level',
    'error',
    ...Object.entries(vars).flatMap(([k, v]) => ['--var', `${k}:${v}`]),
  ]
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
    // No download of the Request.cf object (edgeloop reads none of it): nothing leaves the host.
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false' },
  })
  let stderr = ''
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)))
  const baseUrl = `http://127.0.0.1:${port}`
  const stop = () => {
    child.kill('SIGTERM')
    rmSync(persist, { recursive: true, force: true })
  }
  const seconds = readySeconds(timeoutMs / 1000)
  const deadline = Date.now() + seconds * 1000
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${baseUrl}/healthz`)
      if (res.ok) return { baseUrl, stop }
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) break
    await new Promise((r) => setTimeout(r, 250))
  }
  stop()
  // One line: what was awaited, and the last thing wrangler said.
  const said = stderr.trim().split('\n').at(-1) || 'nothing on stderr'
  if (child.exitCode !== null) {
    throw new ReadinessTimeout(
      `wrangler dev exited with ${child.exitCode} before it was ready: ${said}`,
      0,
    )
  }
  throw new ReadinessTimeout(
    `wrangler dev to answer ${baseUrl}/healthz (it said: ${said})`,
    seconds,
  )
}

/** Median and 99th percentile of a list of milliseconds. */
export function percentiles(ms) {
  const sorted = [...ms].sort((a, b) => a - b)
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]
  return { median: at(0.5), p99: at(0.99), n: sorted.length }
}
