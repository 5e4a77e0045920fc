#!/usr/bin/env node
// `npm start`: the service on wrangler dev (local Durable Object storage in .wrangler/), with the
// offline demo model while .dev.vars says MODEL=demo (as .dev.vars.example does).
//   PORT=9000 npm start   or   npm start -- --port 9000   (default 8787; 127.0.0.1 only)
//   INSPECTOR_PORT=9230 npm start   or   npm start -- --inspector-port 9230   (the debugger's port)
// Other arguments after `--` go to wrangler dev as they are. An edit of .dev.vars restarts it.
// wrangler dev runs in a process group of its own (with the workerd it starts): a restart and a
// stop end the whole group, so nothing it started outlives `npm start`.
import { spawn } from 'node:child_process'
import { copyFileSync, existsSync, readFileSync, watchFile } from 'node:fs'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const HOST = '127.0.0.1'
const READY_TIMEOUT_MS = 120_000

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** `--port N` / `--port=N` from the arguments (removed from them), else PORT, else 8787. */
function takePort(args) {
  let value = process.env.PORT || '8787'
  let from = process.env.PORT ? 'PORT' : 'the default'
  for (let i = 0; i < args.length; i++) {
    const m = /^--port(?:=(.*))?$/.exec(args[i])
    if (!m) continue
    const inline = m[1] !== undefined
    value = inline ? m[1] : (args[i + 1] ?? '')
    from = '--port'
    args.splice(i, inline ? 1 : 2)
    i--
  }
  const port = Number(value)
  if (!/^\d+$/.test(value) || port < 1 || port > 65_535) {
    fail(`${from} must be a port number from 1 to 65535; got "${value}"`)
  }
  return port
}

function fail(message) {
  console.error(`edgeloop: ${message}`)
  process.exit(1)
}

/** Resolves when `port` on HOST can be bound (and frees it again); rejects with the error. */
function probe(port) {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen({ port, host: HOST, exclusive: true }, () => srv.close(() => resolve()))
  })
}

/**
 * wrangler dev's environment: no metrics, and no download of the `Request.cf` object from
 * workers.cloudflare.com (edgeloop reads nothing of it; offline, the download fails with
 * `Unable to fetch the Request.cf object` and a `getaddrinfo` error, and delays the first
 * request by its timeout). Set CLOUDFLARE_CF_FETCH_ENABLED=true to have it fetched.
 */
function devEnv(env) {
  return {
    ...env,
    WRANGLER_SEND_METRICS: 'false',
    CLOUDFLARE_CF_FETCH_ENABLED: env.CLOUDFLARE_CF_FETCH_ENABLED ?? 'false',
  }
}

const args = process.argv.slice(2)
const port = takePort(args)
if (process.env.INSPECTOR_PORT && !args.some((a) => a.startsWith('--inspector-port'))) {
  args.push('--inspector-port', process.env.INSPECTOR_PORT)
}
try {
  await probe(port)
} catch (err) {
  if (err.code === 'EADDRINUSE') {
    fail(
      `port ${port} on ${HOST} is in use; stop what holds it or choose another: PORT=8788 npm start`,
    )
  }
  fail(`cannot listen on ${HOST}:${port}: ${err.message}`)
}

const vars = join(root, '.dev.vars')
if (!existsSync(vars)) {
  copyFileSync(join(root, '.dev.vars.example'), vars)
  console.log('edgeloop: created .dev.vars from .dev.vars.example (API_TOKEN=dev-token)')
}
const url = `http://${HOST}:${port}`
const wrangler = join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js')
let child
// Set while wrangler dev is being restarted: its exit then starts the next one.
let restarting = false

function startWrangler() {
  child = spawn(
    process.execPath,
    [
      wrangler,
      'dev',
      '--ip',
      HOST,
      '--port',
      String(port),
      '--show-interactive-dev-session=false',
      ...args,
    ],
    { cwd: root, stdio: 'inherit', env: devEnv(process.env), detached: true },
  )
  const group = child
  group.on('exit', async (code) => {
    // wrangler is gone; whatever it started in its group (workerd) goes with it.
    signalGroup(group, 'SIGKILL')
    if (!restarting) process.exit(code ?? 0)
    restarting = false
    await portFree()
    startWrangler()
  })
  void announce(child)
}

/** Sends `sig` to wrangler dev's whole process group (wrangler, workerd); gone already is fine. */
function signalGroup(running, sig) {
  try {
    process.kill(-running.pid, sig)
  } catch (err) {
    if (err.code !== 'ESRCH') throw err
  }
}

/** Waits (at most 10 s) until the port can be bound again, for the next wrangler dev. */
async function portFree() {
  for (let i = 0; i < 100; i++) {
    try {
      return await probe(port)
    } catch {
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

// Say where it serves only once it answers there: that URL, not the one asked for, is the truth.
async function announce(running) {
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (running.exitCode === null && Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/healthz`)
      const body = await res.json()
      if (body?.service === 'edgeloop') {
        console.log(
          `\nedgeloop: serving ${url}  (try: curl ${url}/healthz; the README walks through the demo)\n`,
        )
        return
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250))
  }
}

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    restarting = false
    signalGroup(child, sig)
    // wrangler ends workerd and exits; one that does not within 5 s is ended.
    setTimeout(() => signalGroup(child, 'SIGKILL'), 5_000).unref()
  })
}
process.on('exit', () => signalGroup(child, 'SIGKILL'))
startWrangler()

// wrangler dev reloads the code when it changes, but reads .dev.vars only when it starts: an
// edit (MODEL=script, ENABLED_TOOLS …) would go unseen until a restart, so it restarts here.
let seen = readFileSync(vars, 'utf8')
watchFile(vars, { interval: 500 }, () => {
  const now = existsSync(vars) ? readFileSync(vars, 'utf8') : seen
  if (now === seen || restarting) return
  seen = now
  console.log('\nedgeloop: .dev.vars changed; restarting wrangler dev to read it\n')
  restarting = true
  signalGroup(child, 'SIGTERM')
})
