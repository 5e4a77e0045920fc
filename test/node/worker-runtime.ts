/**
 * The real Worker under Miniflare, driven from Node: the bundle `wrangler deploy` would upload,
 * Durable Object storage persisted to a directory, every outbound `fetch` handed to a Node
 * function, and a `kill()` that ends workerd with SIGKILL (no graceful shutdown, no flushing)
 * so that a new runtime can be started on the same storage, as after a crash or an eviction.
 *
 *   const worker = await bundleWorker()
 *   const rt = await WorkerRuntime.start({ worker, storage, bindings, outbound })
 *   await rt.fetch('/healthz')
 *   rt.kill() // now; `await rt.killed` once it is gone
 *   const next = await WorkerRuntime.start({ worker, storage, bindings, outbound })
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { convertV4MiniflareOptions, Miniflare } from 'miniflare'
import { cachedBundleDir } from './bundle-cache.ts'

const root = join(import.meta.dirname, '..', '..')

/** The Worker as built for deployment: the bundle and wrangler.toml's runtime settings. */
export interface WorkerBuild {
  scriptPath: string
  /** The entry and the text modules beside it (agents' Markdown: wrangler.toml's Text rule). */
  modules: { type: 'ESModule' | 'Text'; path: string }[]
  compatibilityDate: string
  compatibilityFlags: string[]
  durableObjects: Record<string, { className: string; useSQLite?: boolean }>
  /** D1 binding names (`[[d1_databases]] binding`), local databases under the storage folder. */
  d1Databases: string[]
  /** KV binding names (`[[kv_namespaces]] binding`), local namespaces under the storage folder. */
  kvNamespaces: string[]
  /** `[assets]`: the directory the build writes (the console's files) and its binding. */
  assets?: { directory: string; binding: string }
}

const builds = new Map<string, Promise<WorkerBuild>>()

/**
 * Bundles the Worker once per process with `wrangler deploy --dry-run --outdir` (the same build
 * a deploy uploads; reused across processes while its sources are unchanged: bundle-cache.ts)
 * and reads its compatibility settings and Durable Objects from wrangler.toml.
 * `alias` adds import substitutions (wrangler's `--alias`, beside wrangler.toml's `[alias]`):
 * an import written exactly as a key resolves to its value, a path from the repository root
 * (a test's agent catalog, say); each set of aliases is bundled once.
 */
export function bundleWorker(alias: Record<string, string> = {}): Promise<WorkerBuild> {
  const key = JSON.stringify(alias)
  const cached = builds.get(key)
  if (cached) return cached
  const building = (async (): Promise<WorkerBuild> => {
    const aliases = Object.entries(alias).flatMap(([from, to]) => ['--alias', `${from}:${to}`])
    const outdir = await cachedBundleDir(aliases)
    // The entry, and the modules wrangler.toml's Text rule wrote beside it (agents' Markdown).
    const texts = (await readdir(outdir)).filter((f) => f.endsWith('.md'))
    return {
      scriptPath: join(outdir, 'index.js'),
      modules: [
        { type: 'ESModule', path: join(outdir, 'index.js') },
        ...texts.map((f) => ({ type: 'Text' as const, path: join(outdir, f) })),
      ],
      ...runtimeSettings(await readFile(join(root, 'wrangler.toml'), 'utf8')),
    }
  })()
  builds.set(key, building)
  return building
}

/**
 * The settings of wrangler.toml that Miniflare needs and the bundle does not carry. Read with
 * patterns, not a TOML parser (importing wrangler's own reader costs seconds per test file);
 * a setting written in a shape these do not know fails here, loudly.
 */
export function runtimeSettings(toml: string): Omit<WorkerBuild, 'scriptPath' | 'modules'> {
  const compatibilityDate = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1]
  if (!compatibilityDate) throw new Error('wrangler.toml: no compatibility_date = "…" found')
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1] ?? ''
  const sqlite = /new_sqlite_classes\s*=\s*\[([^\]]*)\]/g
  const sqliteClasses = [...toml.matchAll(sqlite)].flatMap((m) => strings(m[1]!))
  const durableObjects: WorkerBuild['durableObjects'] = {}
  for (const block of toml.split(/^\[\[durable_objects\.bindings\]\]\s*$/m).slice(1)) {
    const body = block.split(/^\[/m)[0]!
    const name = /^name\s*=\s*"([^"]+)"/m.exec(body)?.[1]
    const className = /^class_name\s*=\s*"([^"]+)"/m.exec(body)?.[1]
    if (!name || !className)
      throw new Error('wrangler.toml: a Durable Object binding needs name and class_name')
    durableObjects[name] = { className, useSQLite: sqliteClasses.includes(className) }
  }
  const d1Databases: string[] = []
  for (const block of toml.split(/^\[\[d1_databases\]\]\s*$/m).slice(1)) {
    const binding = /^binding\s*=\s*"([^"]+)"/m.exec(block.split(/^\[/m)[0]!)?.[1]
    if (!binding) throw new Error('wrangler.toml: a D1 database needs binding = "…"')
    d1Databases.push(binding)
  }
  const kvNamespaces: string[] = []
  for (const block of toml.split(/^\[\[kv_namespaces\]\]\s*$/m).slice(1)) {
    const binding = /^binding\s*=\s*"([^"]+)"/m.exec(block.split(/^\[/m)[0]!)?.[1]
    if (!binding) throw new Error('wrangler.toml: a KV namespace needs binding = "…"')
    kvNamespaces.push(binding)
  }
  const assetsBlock = toml.split(/^\[assets\]\s*$/m)[1]?.split(/^\[/m)[0]
  let assets: WorkerBuild['assets']
  if (assetsBlock !== undefined) {
    const directory = /^directory\s*=\s*"([^"]+)"/m.exec(assetsBlock)?.[1]
    const binding = /^binding\s*=\s*"([^"]+)"/m.exec(assetsBlock)?.[1]
    if (!directory || !binding)
      throw new Error('wrangler.toml: [assets] needs directory and binding')
    assets = { directory: join(root, directory), binding }
  }
  return {
    compatibilityDate,
    compatibilityFlags: strings(flags),
    durableObjects,
    d1Databases,
    kvNamespaces,
    ...(assets ? { assets } : {}),
  }
}

function strings(list: string): string[] {
  return [...list.matchAll(/"([^"]*)"/g)].map((m) => m[1]!)
}

/** A fresh directory for one run of Durable Object storage; `remove()` deletes it. */
export async function tempStorage(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'edgeloop-do-'))
  return { path, remove: () => rm(path, { recursive: true, force: true }) }
}

export interface RuntimeOptions {
  worker: WorkerBuild
  /** Directory holding the Durable Objects' SQLite files; reuse it to restart after a kill. */
  storage: string
  /** Every binding the Worker reads (wrangler.toml's [vars] are not applied: tests set all). */
  bindings: Record<string, string>
  /** The port workerd listens on at 127.0.0.1; any free one when not given. */
  port?: number
  /** Receives every outbound request of the Worker and its Durable Objects. */
  outbound: (request: Request) => Promise<Response>
  /** Each line the Worker and workerd log (console output, runtime errors), in order. */
  onLog?: (line: string) => void
}

const ORIGIN = 'https://edgeloop.test'
let starting: Promise<unknown> = Promise.resolve()

/** One workerd process running the Worker; see the file comment. */
export class WorkerRuntime {
  readonly #mf: Miniflare
  readonly #pid: number
  #dead: Promise<void> | undefined

  private constructor(mf: Miniflare, pid: number) {
    this.#mf = mf
    this.#pid = pid
  }

  /** Starts workerd and waits until it serves requests. */
  static start(options: RuntimeOptions): Promise<WorkerRuntime> {
    // One start at a time in this process: the new workerd is told apart from the others
    // (to be SIGKILLed by pid) as the one child process that was not there before.
    const next = starting.then(() => WorkerRuntime.#start(options))
    starting = next.catch(() => {})
    return next
  }

  static async #start(options: RuntimeOptions): Promise<WorkerRuntime> {
    const { worker } = options
    const before = await workerdChildren()
    /** The last lines workerd wrote, for a start that fails. */
    const output: string[] = []
    const log = (line: string) => {
      output.push(line)
      if (output.length > 40) output.shift()
      options.onLog?.(line)
    }
    // Miniflare 5 takes the options of Miniflare 4 through its converter.
    const mf = new Miniflare(
      convertV4MiniflareOptions({
        modules: worker.modules,
        modulesRoot: dirname(worker.scriptPath),
        compatibilityDate: worker.compatibilityDate,
        compatibilityFlags: worker.compatibilityFlags,
        durableObjects: worker.durableObjects,
        d1Databases: worker.d1Databases,
        kvNamespaces: worker.kvNamespaces,
        // As deployed: every request reaches the Worker first, which reads the files by binding.
        ...(worker.assets
          ? {
              assets: {
                ...worker.assets,
                routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: true },
                assetConfig: { html_handling: 'none', not_found_handling: 'none' },
              },
            }
          : {}),
        resourcePersistencePath: options.storage,
        ...(options.port !== undefined ? { host: '127.0.0.1', port: options.port } : {}),
        bindings: options.bindings,
        outboundService: options.outbound as never,
        handleStructuredLogs: ({ message }) => log(message),
      }),
    )
    try {
      await mf.ready
    } catch (err) {
      await mf.dispose().catch(() => {})
      throw new Error(`${(err as Error).message}\nworkerd said:\n${output.join('\n')}`)
    }
    const started = (await workerdChildren()).filter((pid) => !before.includes(pid))
    if (started.length !== 1) {
      await mf.dispose()
      throw new Error(`expected one new workerd process, found ${started.length}`)
    }
    return new WorkerRuntime(mf, started[0]!)
  }

  /** The workerd process id. */
  get pid(): number {
    return this.#pid
  }

  /** Whether `kill()` or `stop()` was called. */
  get dead(): boolean {
    return this.#dead !== undefined
  }

  /** Resolves once the runtime is gone (after `kill()` or `stop()`). */
  get killed(): Promise<void> {
    return this.#dead ?? Promise.reject(new Error('the runtime was not killed'))
  }

  /**
   * Where workerd listens on 127.0.0.1: for clients that hold many requests open at once
   * (`fetch` goes through Miniflare's dispatcher, which holds few connections).
   */
  url(): Promise<URL> {
    return this.#mf.ready
  }

  /** A request to the Worker's fetch handler; `path` is relative to its origin. */
  fetch(path: string, init: RequestInit = {}): Promise<Response> {
    return this.#mf.dispatchFetch(`${ORIGIN}${path}`, init as never) as unknown as Promise<Response>
  }

  /**
   * SIGKILLs workerd at once (synchronously: nothing the Worker does after this call reaches
   * the outside), then releases Miniflare's own resources. Safe to call twice.
   */
  kill(): Promise<void> {
    if (this.#dead) return this.#dead
    try {
      process.kill(this.#pid, 'SIGKILL')
    } catch {
      // already gone
    }
    this.#dead = this.#mf.dispose().catch(() => {})
    return this.#dead
  }

  /** Ends the runtime at the end of a test (Miniflare's dispose also ends workerd with SIGKILL). */
  stop(): Promise<void> {
    return this.kill()
  }
}

/** Process ids of the workerd processes this process started. */
async function workerdChildren(): Promise<number[]> {
  const out: number[] = []
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8')
      const m = /^\d+ \((.*)\) \S (\d+)/.exec(stat)
      if (m && m[1] === 'workerd' && Number(m[2]) === process.pid) out.push(Number(entry))
    } catch {
      // exited while listing
    }
  }
  return out
}
