/**
 * The Worker's bundle, made once for a given set of sources and kept under node_modules/.cache:
 * every file that bundles the Worker (crash, conformance, eval, served-agent tests, and the eval
 * CLI's own process) gets the same `wrangler deploy --dry-run --outdir` output, which took 10 to
 * 40 s each time on the shared 2-core machine. An entry is reused only when every file esbuild
 * read for it (the metafile's inputs: src/, agents/, tools/, the packages in node_modules) and
 * the files that steer the build (wrangler.toml, tsconfig.json, package.json, package-lock.json)
 * are byte for byte what they were; otherwise wrangler bundles anew. Processes bundling at once
 * (test files side by side, the eval CLI's child) wait for one another through a lock directory.
 */
import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'

const root = join(import.meta.dirname, '..', '..')
const CACHE = join(root, 'node_modules', '.cache', 'edgeloop-bundle')
const LOCK = join(CACHE, '.lock')
/** What steers the build without being one of its inputs. */
const BUILD_FILES = ['wrangler.toml', 'tsconfig.json', 'package.json', 'package-lock.json']
/** Entries kept: one per recent state of the sources (a branch switch back finds its own). */
const KEEP = 8
/** A lock older than this is from a process that died while it bundled. */
const STALE_LOCK_MS = 10 * 60_000

/**
 * The directory holding the bundle for the sources as they are now (see the file comment);
 * `args` are further arguments of wrangler's (`--alias from:to`), part of what an entry is for.
 */
export async function cachedBundleDir(args: string[] = []): Promise<string> {
  await mkdir(CACHE, { recursive: true })
  const hit = await findEntry(args)
  if (hit) {
    // A hit skips wrangler, and with it wrangler.toml's [build] (the console's assets, which
    // the runtime serves): run it as wrangler would. It rewrites nothing that is current. Loaded
    // by path from the root, so that the eval CLI's bundle of this file runs the file itself.
    const script = pathToFileURL(join(root, 'scripts', 'build.mjs')).href
    const { build } = (await import(script)) as { build: () => Promise<unknown> }
    await build()
    const now = new Date()
    await utimes(hit, now, now) // newest first, and kept by prune()
    return hit
  }
  await lock()
  try {
    return (await findEntry(args)) ?? (await bundleAnew(args))
  } finally {
    await rm(LOCK, { recursive: true, force: true })
  }
}

/** Runs wrangler's bundling into a new entry; its path. */
async function bundleAnew(args: string[]): Promise<string> {
  const tmp = join(CACHE, `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`)
  const metafile = `${tmp}.meta.json`
  const wrangler = join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js')
  try {
    await promisify(execFile)(
      process.execPath,
      [wrangler, 'deploy', '--dry-run', '--outdir', tmp, '--metafile', metafile, ...args],
      { cwd: root, env: { ...process.env, WRANGLER_SEND_METRICS: 'false', WRANGLER_LOG: 'error' } },
    )
  } catch (err) {
    await rm(tmp, { recursive: true, force: true })
    await rm(metafile, { force: true })
    const { stderr, stdout } = err as { stderr?: string; stdout?: string }
    throw new Error(`bundling the Worker failed: ${stderr || stdout || (err as Error).message}`)
  }
  const meta = JSON.parse(await readFile(metafile, 'utf8')) as { inputs?: object }
  await rm(metafile, { force: true })
  const inputs = Object.keys(meta.inputs ?? {})
  if (!inputs.length) throw new Error('wrangler wrote no metafile inputs for the bundle')
  const hashes = new Map<string, string>()
  const files: Record<string, string> = {}
  for (const file of [...BUILD_FILES, ...inputs].sort()) files[file] = await hashOf(file, hashes)
  const manifest: Manifest = { args, files }
  const id = createHash('sha256').update(JSON.stringify(manifest)).digest('hex').slice(0, 24)
  await writeFile(join(tmp, 'inputs.json'), JSON.stringify(manifest))
  const entry = join(CACHE, id)
  await rm(entry, { recursive: true, force: true })
  await rename(tmp, entry)
  await prune()
  return entry
}

/** What an entry was made from: wrangler's further arguments, and each input file's SHA-256. */
interface Manifest {
  args: string[]
  files: Record<string, string>
}

/** The newest entry made with `args` whose inputs are all unchanged, if any. */
async function findEntry(args: string[]): Promise<string | undefined> {
  const hashes = new Map<string, string>()
  for (const entry of await entries()) {
    let manifest: Manifest
    try {
      manifest = JSON.parse(await readFile(join(entry, 'inputs.json'), 'utf8'))
    } catch {
      continue // being written, or damaged: not an entry
    }
    if (JSON.stringify(manifest.args) !== JSON.stringify(args) || !manifest.files) continue
    let same = true
    for (const [file, hash] of Object.entries(manifest.files)) {
      if ((await hashOf(file, hashes)) !== hash) {
        same = false
        break
      }
    }
    if (same) return entry
  }
  return undefined
}

/** The entries, newest first. */
async function entries(): Promise<string[]> {
  const names = (await readdir(CACHE)).filter((n) => !n.startsWith('.'))
  const dated = await Promise.all(
    names.map(async (n) => ({ path: join(CACHE, n), at: (await stat(join(CACHE, n))).mtimeMs })),
  )
  return dated.sort((a, b) => b.at - a.at).map((e) => e.path)
}

async function prune(): Promise<void> {
  for (const old of (await entries()).slice(KEEP)) await rm(old, { recursive: true, force: true })
}

/** SHA-256 of a file under the root ('missing' when it is not there), memoized in `seen`. */
async function hashOf(file: string, seen: Map<string, string>): Promise<string> {
  let hash = seen.get(file)
  if (hash === undefined) {
    hash = await readFile(join(root, file)).then(
      (bytes) => createHash('sha256').update(bytes).digest('hex'),
      () => 'missing',
    )
    seen.set(file, hash)
  }
  return hash
}

/** Takes the lock directory, waiting while another live process holds it. */
async function lock(): Promise<void> {
  for (;;) {
    try {
      await mkdir(LOCK)
      await writeFile(join(LOCK, 'pid'), String(process.pid))
      return
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    if (await staleLock()) await rm(LOCK, { recursive: true, force: true })
    else await new Promise((r) => setTimeout(r, 250))
  }
}

async function staleLock(): Promise<boolean> {
  try {
    const since = Date.now() - (await stat(LOCK)).mtimeMs
    const pid = Number(await readFile(join(LOCK, 'pid'), 'utf8').catch(() => 'NaN'))
    if (since > STALE_LOCK_MS) return true
    if (!Number.isInteger(pid)) return false // just taken: its pid is being written
    process.kill(pid, 0)
    return false
  } catch (err) {
    // ESRCH: the holder is gone; ENOENT: the lock was just let go (taking it is tried again).
    return (err as NodeJS.ErrnoException).code === 'ESRCH'
  }
}
