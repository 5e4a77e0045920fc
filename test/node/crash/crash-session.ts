/**
 * One Durable Object storage directory, one fake outside world and as many runtimes as the
 * crashes need: the crash test and the soak drive runs through the HTTP API, kill workerd when
 * an interception (or the driver) says so, start a new runtime on the same storage and let the
 * alarm resume the run. Everything needed to judge the run afterwards is kept: each request the
 * Worker sent, each kill, each view of the run the API returned.
 */
import type { FakeReply } from '../../fakes/fake-openai'
import type { RunResult } from '../../../src/kernel/trace'
import type { RunView } from '../../../src/runs/types'
import { FakeNetwork } from '../fake-network'
import { bundleWorker, tempStorage, WorkerRuntime } from '../worker-runtime'
import { StepModel } from './step-model'

export const MODEL_HOST = 'api.openai.test'
export const RECEIVER_HOST = 'receiver.test'
const API_TOKEN = 'crash-token'
const OPENAI_KEY = 'sk-crash-fake-openai-0123456789'

/** Every binding the Worker reads in crash tests; a crash point may override some. */
export const CRASH_BINDINGS: Record<string, string> = {
  API_TOKEN,
  WEBHOOK_SECRET: 'crash-webhook-secret',
  OPENAI_API_KEY: OPENAI_KEY,
  OPENAI_BASE_URL: `https://${MODEL_HOST}/v1`,
  MODEL: 'gpt-test',
  MODEL_PROTOCOL: 'native',
  MODEL_MAX_RETRIES: '0',
  CONFIRM_POLICY: 'allow',
  ENABLED_TOOLS: 'calculator,http_get,http_post',
  HTTP_ALLOWLIST: RECEIVER_HOST,
  HTTP_POST_IDEMPOTENT: 'false',
  CALLBACK_ALLOWLIST: RECEIVER_HOST,
  CPU_MS: '30000',
}

export interface Kill {
  generation: number
  /** How many network requests had arrived when it happened. */
  afterRequests: number
  why: string
}

/** What the API showed of a run, and in which runtime. */
export interface Observation {
  generation: number
  stepCount: number
  phase: string
}

export interface SessionOptions {
  bindings?: Record<string, string>
  /** Called with every line the Worker logs (off by default: tests stay quiet). */
  onLog?: (line: string) => void
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export class CrashSession {
  readonly network = new FakeNetwork()
  readonly model = new StepModel(OPENAI_KEY)
  readonly kills: Kill[] = []
  readonly observations = new Map<string, Observation[]>()
  readonly bindings: Record<string, string>
  #runtime: WorkerRuntime | undefined
  #generation = 0
  #storage: Awaited<ReturnType<typeof tempStorage>> | undefined
  readonly #onLog: ((line: string) => void) | undefined

  private constructor(options: SessionOptions) {
    this.bindings = { ...CRASH_BINDINGS, ...options.bindings }
    this.#onLog = options.onLog
    this.network.on(MODEL_HOST, this.model.handler).on(RECEIVER_HOST, receiver)
  }

  /** A session on fresh storage with its first runtime started. */
  static async open(options: SessionOptions = {}): Promise<CrashSession> {
    const session = new CrashSession(options)
    session.#storage = await tempStorage()
    await session.#start()
    return session
  }

  /** Which runtime is current (1 for the first; each restart adds one). */
  get generation(): number {
    return this.#generation
  }

  /** Whether the current runtime has been killed and not replaced yet. */
  get down(): boolean {
    return this.#runtime?.dead ?? true
  }

  /** SIGKILLs the current runtime now (synchronously); `restart()` brings up the next. */
  kill(why: string): void {
    if (!this.#runtime || this.#runtime.dead) return
    this.kills.push({
      generation: this.#generation,
      afterRequests: this.network.requests.length,
      why,
    })
    void this.#runtime.kill()
  }

  /** Waits for the killed runtime to be gone and starts a new one on the same storage. */
  async restart(): Promise<void> {
    if (this.#runtime && !this.#runtime.dead) return
    await this.#runtime?.killed
    await this.#start()
  }

  /** A request to the current runtime with the API token. */
  api(path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
    if (!this.#runtime || this.#runtime.dead) {
      return Promise.reject(new Error('runtime is down'))
    }
    const { json, ...rest } = init
    const headers: Record<string, string> = { authorization: `Bearer ${API_TOKEN}` }
    if (json !== undefined) headers['content-type'] = 'application/json'
    return this.#runtime.fetch(path, {
      ...rest,
      headers: { ...headers, ...(rest.headers as Record<string, string> | undefined) },
      ...(json !== undefined ? { body: JSON.stringify(json), method: rest.method ?? 'POST' } : {}),
    })
  }

  /** Starts a run whose model replies are `script` (by step); returns its id and task. */
  async startRun(input: {
    tag: string
    script: FakeReply[]
    tools?: string[]
    callback?: boolean
    /** The agent to run (default: the default agent). */
    agent?: string
  }): Promise<{ id: string; task: string }> {
    const task = `[${input.tag}] Check the receiver and record the value.`
    this.model.script(input.tag, input.script)
    const res = await this.api('/v1/runs', {
      json: {
        task,
        ...(input.tools ? { tools: input.tools } : {}),
        ...(input.agent ? { agent: input.agent } : {}),
        ...(input.callback ? { callback_url: `https://${RECEIVER_HOST}/callback` } : {}),
      },
    })
    const body = (await res.json()) as { id: string }
    if (res.status !== 202) throw new Error(`POST /v1/runs: ${res.status} ${JSON.stringify(body)}`)
    return { id: body.id, task }
  }

  /**
   * Starts the same run as `startRun` the way an MCP client does (docs/serving.md): a
   * `tools/call` of the default agent as a task on `/mcp`, whose task id is the run's id.
   */
  async startServedRun(input: { tag: string; script: FakeReply[] }): Promise<{
    id: string
    task: string
  }> {
    const task = `[${input.tag}] Check the receiver and record the value.`
    this.model.script(input.tag, input.script)
    const body = await this.mcp('tools/call', {
      name: 'default',
      arguments: { task },
      task: { ttl: 600_000 },
    })
    const id = (body.result as { task?: { taskId?: string } } | undefined)?.task?.taskId
    if (!id) throw new Error(`tools/call as a task: ${JSON.stringify(body)}`)
    return { id, task }
  }

  /** One JSON-RPC request to `/mcp` with the API token; its response, from JSON or SSE. */
  async mcp(method: string, params: unknown): Promise<{ result?: unknown; error?: unknown }> {
    const res = await this.api('/mcp', {
      json: { jsonrpc: '2.0', id: 1, method, params },
      headers: {
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
    })
    const text = await res.text()
    if (res.status !== 200) throw new Error(`/mcp ${method}: ${res.status} ${text}`)
    if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
      return JSON.parse(text) as { result?: unknown; error?: unknown }
    }
    const messages = text
      .split(/\n\n/)
      .map((event) => event.split('\n').filter((l) => l.startsWith('data:')))
      .map((lines) => lines.map((l) => l.slice(5).trim()).join('\n'))
      .filter(Boolean)
      .map((data) => JSON.parse(data) as { id?: unknown; result?: unknown; error?: unknown })
    const answer = messages.find((m) => m.id === 1)
    if (!answer) throw new Error(`/mcp ${method}: no response in ${text}`)
    return answer
  }

  /** `GET /v1/runs/:id`, remembered as an observation of this runtime. */
  async view(id: string): Promise<RunView> {
    const res = await this.api(`/v1/runs/${id}`)
    if (res.status !== 200) throw new Error(`GET /v1/runs/${id}: ${res.status}`)
    const view = (await res.json()) as RunView
    const seen = this.observations.get(id) ?? []
    seen.push({ generation: this.#generation, stepCount: view.stepCount, phase: view.phase })
    this.observations.set(id, seen)
    return view
  }

  /**
   * Approves one pending call through the API (the person's click), with `args` instead of the
   * model's when given (an edit, docs/human-in-the-loop.md#edit-then-approve).
   */
  approve(
    id: string,
    callId: string,
    argsHash: string,
    args?: Record<string, unknown>,
  ): Promise<Response> {
    return this.api(`/v1/runs/${id}/approvals/${callId}`, {
      json: { decision: 'approve', args_hash: argsHash, ...(args ? { args } : {}) },
    })
  }

  /** Answers a pending question through the API. */
  answer(id: string, callId: string, hash: string, answer: unknown): Promise<Response> {
    return this.api(`/v1/runs/${id}/questions/${callId}`, {
      json: { question_hash: hash, answer },
    })
  }

  /** `POST /v1/runs/:id/cancel`. */
  cancel(id: string): Promise<Response> {
    return this.api(`/v1/runs/${id}/cancel`, { json: { reason: 'crash test' } })
  }

  /**
   * Follows the run until it is done and its deliveries are settled, restarting the runtime
   * after each kill and approving what waits for a person (`onView` sees every view first and
   * may kill instead). Returns the final view, or undefined when the run did not finish by
   * itself within `timeoutMs` of the last restart: a stuck run.
   */
  async drive(
    id: string,
    options: {
      timeoutMs?: number
      onView?: (view: RunView) => void | Promise<void>
      approve?: boolean
      /** Approvals are approved with these arguments (an edit). */
      edit?: Record<string, unknown>
    } = {},
  ): Promise<RunView | undefined> {
    const timeoutMs = options.timeoutMs ?? 15_000
    let deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      if (this.down) {
        await this.restart()
        deadline = Date.now() + timeoutMs
        continue
      }
      let view: RunView
      try {
        view = await this.view(id)
      } catch {
        if (!this.down) await sleep(50) // the runtime is dying under us, or restarting
        continue
      }
      await options.onView?.(view)
      if (this.down) continue
      const settled = view.deliveries.every((d) => d.status !== 'pending')
      if (view.phase === 'done' && settled) return view
      if (options.approve ?? true) {
        for (const p of view.pendingApprovals) {
          // A question gets its first choice; an approval its edit, if the point makes one.
          const sent =
            p.kind === 'question'
              ? this.answer(id, p.callId, p.argsHash, p.ask?.choices?.[0] ?? 'yes')
              : this.approve(id, p.callId, p.argsHash, options.edit)
          await sent.catch(() => {})
        }
      }
      await sleep(25)
    }
    return undefined
  }

  /** The run's trace (`GET /v1/runs/:id/trace`). */
  async trace(id: string): Promise<RunResult> {
    const res = await this.api(`/v1/runs/${id}/trace`)
    return (await res.json()) as RunResult
  }

  /** Ends the runtime and deletes the storage. */
  async close(): Promise<void> {
    await this.#runtime?.stop()
    await this.#storage?.remove()
  }

  async #start(): Promise<void> {
    const generation = ++this.#generation
    // Not `down`: the new runtime's alarm may send requests before `start` has returned it.
    const alive = () => !this.kills.some((k) => k.generation === generation)
    this.#runtime = await WorkerRuntime.start({
      worker: await bundleWorker(),
      storage: this.#storage!.path,
      bindings: this.bindings,
      outbound: this.network.handlerFor(generation, alive),
      ...(this.#onLog ? { onLog: this.#onLog } : {}),
    })
  }
}

/** The side effects' destination: answers GET (read-only calls) and POST (effects, callbacks). */
async function receiver(req: Request): Promise<Response> {
  const path = new URL(req.url).pathname
  if (req.method === 'GET') return new Response(`status of ${path}: green\n`)
  await req.text()
  if (path === '/callback') return new Response(null, { status: 204 })
  return Response.json({ received: true, path }, { status: 201 })
}
