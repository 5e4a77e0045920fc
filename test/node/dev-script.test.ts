/**
 * `npm start` (scripts/dev.mjs) in a copy of the project's layout: it creates .dev.vars, says
 * where it serves, and restarts wrangler dev when .dev.vars changes, so an edit such as
 * `MODEL=script` (docs/trying-tools.md) takes effect without a manual restart.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..')

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
    srv.on('error', reject)
  })
}

/** Processes whose working folder is `dir` (wrangler and workerd run in the project's folder). */
function inFolder(dir: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) === dir) pids.push(Number(entry))
    } catch {
      // gone, or not ours to read
    }
  }
  return pids
}

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer()
    srv.once('error', () => resolve(false))
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)))
  })
}

describe('npm start (scripts/dev.mjs)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgeloop-start-'))
  let child: ChildProcess | undefined

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r))
      child.kill('SIGINT')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  })

  it('restarts wrangler dev when .dev.vars changes, so the new settings apply; stopped, leaves nothing running', async () => {
    // The project as a clone has it, with its own .dev.vars and local storage.
    for (const name of [
      'node_modules',
      'src',
      'tools',
      'agents',
      'package.json',
      'wrangler.toml',
    ]) {
      symlinkSync(join(ROOT, name), join(dir, name))
    }
    mkdirSync(join(dir, 'scripts'))
    // dev.mjs, and the build wrangler.toml's [build] runs (docs/development.md#the-build).
    for (const script of ['dev', 'build', 'console-assets', 'write-atomic']) {
      copyFileSync(join(ROOT, `scripts/${script}.mjs`), join(dir, `scripts/${script}.mjs`))
    }
    copyFileSync(join(ROOT, '.dev.vars.example'), join(dir, '.dev.vars.example'))
    const port = await freePort()
    let out = ''
    child = spawn(process.execPath, [join(dir, 'scripts/dev.mjs')], {
      cwd: dir,
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stdout!.on('data', (d) => (out += d))
    child.stderr!.on('data', (d) => (out += d))
    const startedHere = () => inFolder(dir)
    const serving = `edgeloop: serving http://127.0.0.1:${port}`
    const lines = (text: string) => out.split(text).length - 1
    const until = async (done: () => boolean, what: string) => {
      for (let i = 0; i < 1200 && !done(); i++) await new Promise((r) => setTimeout(r, 100))
      expect(done(), `${what}; output:\n${out.slice(-3000)}`).toBe(true)
    }
    const warnings = async () => {
      // .dev.vars.example's API_TOKEN: the full report needs service:read (it has every scope).
      const res = await fetch(`http://127.0.0.1:${port}/readyz`, {
        headers: { authorization: 'Bearer dev-token' },
      })
      return ((await res.json()) as { warnings?: string[] }).warnings ?? []
    }

    await until(() => lines(serving) === 1, 'it says where it serves')
    expect(out).toContain('created .dev.vars from .dev.vars.example')
    expect((await warnings()).join()).toContain('MODEL=demo')

    const vars = join(dir, '.dev.vars')
    writeFileSync(vars, readFileSync(vars, 'utf8').replace(/^MODEL=demo$/m, 'MODEL=script'))
    await until(() => lines(serving) === 2, 'it restarts and serves again')
    expect(out).toContain('edgeloop: .dev.vars changed; restarting wrangler dev to read it')
    expect((await warnings()).join()).toContain('MODEL=script')
    expect(child.exitCode).toBe(null)

    // Stopped after its restart, it leaves nothing running: no wrangler, no workerd.
    const exited = new Promise((r) => child!.once('exit', r))
    child.kill('SIGTERM')
    await exited
    await until(() => startedHere().length === 0, 'every process it started has ended')
    await expect(listenable(port)).resolves.toBe(true)
  }, 240_000)
})
