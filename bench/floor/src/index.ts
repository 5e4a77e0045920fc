// The floor of `npm run bench -- peer` (bench/peer-cost.mjs): the least code that does the peer
// bench's task the way edgeloop's deployment does it, with the same bindings and clients, so the
// bench can tell what a first run after a fresh start costs any Worker doing this task from what
// edgeloop's own code adds (docs/development.md#the-peer-bench). `POST /v1/runs` (the body checked
// by hand, the bearer token compared) starts a run in its own SQLite-backed Durable Object
// (`RUNS`, class `RunStore`), which stores the run and each step as rows and runs the loop in an
// alarm: the `openai` client's chat completions with one tool, `http_get`, the run's row in the
// D1 run index (`RUN_INDEX`) as it starts and as it ends, and a signed callback. No kernel, no
// zod, no router, no settings checks. Dev only: never part of edgeloop's Worker. Bundled by
// bench/floor/build.mjs, which also builds the two variants: without `RUN_INDEX` (no D1 writes)
// and with plain `fetch` to the model (model-fetch.ts) instead of the client (model.ts).
import { DurableObject } from 'cloudflare:workers'
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions'
import { httpGet } from './http-get'
import { complete, type ModelEnv } from './model'

interface Env extends ModelEnv {
  RUNS: DurableObjectNamespace<RunStore>
  /** Absent in the variant without D1 writes. */
  RUN_INDEX?: D1Database
  API_TOKEN: string
  WEBHOOK_SECRET: string
  ENABLED_TOOLS: string
  HTTP_ALLOWLIST: string
  CALLBACK_ALLOWLIST: string
}

interface NewRun {
  id: string
  task: string
  callbackUrl: string | null
}

const MAX_STEPS = 5
const encoder = new TextEncoder()

const list = (value: string) => value.split(',').map((s) => s.trim())

const error = (status: number, code: string, message: string) =>
  Response.json({ error: { code, message } }, { status })

/** The bearer token against API_TOKEN in constant time (workerd's; its length is no secret). */
function sameToken(given: string, expected: string): boolean {
  const a = encoder.encode(given)
  const b = encoder.encode(expected)
  return a.byteLength === b.byteLength && crypto.subtle.timingSafeEqual(a, b)
}

/** The start body checked by hand: the run's task and callback, or what is wrong with it. */
function checkBody(body: unknown, env: Env): Omit<NewRun, 'id'> | string {
  if (typeof body !== 'object' || body === null) return 'the body must be a JSON object'
  const { task, tools, callback_url } = body as Record<string, unknown>
  if (typeof task !== 'string' || task.trim() === '') return '"task" must be a non-empty string'
  const enabled = list(env.ENABLED_TOOLS)
  if (
    tools !== undefined &&
    (!Array.isArray(tools) || tools.some((t) => typeof t !== 'string' || !enabled.includes(t)))
  ) {
    return `"tools" must be a list of enabled tools (${enabled.join(', ')})`
  }
  if (callback_url === undefined) return { task, callbackUrl: null }
  if (typeof callback_url !== 'string' || !URL.canParse(callback_url)) {
    return '"callback_url" must be a URL'
  }
  const url = new URL(callback_url)
  if (url.protocol !== 'https:' || !list(env.CALLBACK_ALLOWLIST).includes(url.host)) {
    return `"callback_url" must be https on an allowed host, not ${url.host}`
  }
  return { task, callbackUrl: callback_url }
}

/** Whether this isolate has created the index's table (with its first write, in one batch). */
let indexReady = false

/** The run's row in the run index, as one D1 batch; nothing in the variant without D1. */
async function writeIndex(env: Env, id: string, task: string, status: string, steps: number) {
  if (!env.RUN_INDEX) return
  const now = Date.now()
  const write = env.RUN_INDEX.prepare(
    `INSERT INTO runs (id, task, status, created_at, updated_at, steps) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at,
     steps = excluded.steps`,
  ).bind(id, task, status, now, now, steps)
  const schema = env.RUN_INDEX.prepare(
    `CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, task TEXT NOT NULL,
     status TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
     steps INTEGER NOT NULL)`,
  )
  await env.RUN_INDEX.batch(indexReady ? [write] : [schema, write])
  indexReady = true
}

let signingKey: Promise<CryptoKey> | undefined

/** POSTs the result, signed as edgeloop signs its callbacks (HMAC-SHA256, `c1=`). */
async function sendCallback(env: Env, url: string, id: string, result: unknown) {
  signingKey ??= crypto.subtle.importKey(
    'raw',
    encoder.encode(env.WEBHOOK_SECRET),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  const body = JSON.stringify(result)
  const timestamp = Math.floor(Date.now() / 1000)
  const mac = await crypto.subtle.sign(
    'HMAC',
    await signingKey,
    encoder.encode(`edgeloop-callback.${timestamp}.${body}`),
  )
  const hex = [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, '0')).join('')
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-edgeloop-run-id': id,
      'x-edgeloop-timestamp': String(timestamp),
      'x-edgeloop-signature': `c1=${hex}`,
    },
    body,
  })
  await res.body?.cancel()
}

/** One run: its row, its steps as rows, the loop in an alarm. */
export class RunStore extends DurableObject<Env> {
  /** Stores a new run and arms the alarm that runs it. */
  async start(run: NewRun): Promise<void> {
    const sql = this.ctx.storage.sql
    sql.exec(`CREATE TABLE IF NOT EXISTS run (id TEXT PRIMARY KEY, task TEXT NOT NULL,
      callback_url TEXT, status TEXT NOT NULL, answer TEXT, created_at INTEGER NOT NULL)`)
    sql.exec(`CREATE TABLE IF NOT EXISTS step (seq INTEGER PRIMARY KEY, message TEXT NOT NULL)`)
    sql.exec(
      `INSERT INTO run (id, task, callback_url, status, created_at) VALUES (?, ?, ?, 'queued', ?)`,
      run.id,
      run.task,
      run.callbackUrl,
      Date.now(),
    )
    await this.ctx.storage.setAlarm(Date.now())
  }

  /**
   * Runs the loop to its answer, the index row written beside it; then the index row of its end
   * (after the first: D1 keeps the last) and the callback, which waits for neither write.
   */
  override async alarm(): Promise<void> {
    const sql = this.ctx.storage.sql
    const run = sql
      .exec<{ id: string; task: string; callback_url: string | null; status: string }>(
        'SELECT id, task, callback_url, status FROM run',
      )
      .one()
    if (run.status !== 'queued') return
    const started = writeIndex(this.env, run.id, run.task, 'running', 0)
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: 'Answer the task. Use http_get to read pages.' },
      { role: 'user', content: run.task },
      ...sql
        .exec<{ message: string }>('SELECT message FROM step ORDER BY seq')
        .toArray()
        .map((row) => JSON.parse(row.message) as ChatCompletionMessageParam),
    ]
    const record = (message: ChatCompletionMessageParam) => {
      messages.push(message)
      sql.exec('INSERT INTO step (message) VALUES (?)', JSON.stringify(message))
    }
    let answer: string | null = null
    let failure: string | null = null
    try {
      for (let step = 0; step < MAX_STEPS && answer === null; step++) {
        const reply = await complete(this.env, messages)
        record({ role: 'assistant', content: reply.content, tool_calls: reply.tool_calls })
        if (!reply.tool_calls?.length) answer = reply.content ?? ''
        for (const call of reply.tool_calls ?? []) {
          const output =
            call.type === 'function' && call.function.name === 'http_get'
              ? await httpGet(list(this.env.HTTP_ALLOWLIST), call.function.arguments)
              : `[ToolError] no tool ${call.type === 'function' ? call.function.name : call.type}`
          record({ role: 'tool', tool_call_id: call.id, content: output })
        }
      }
      if (answer === null) failure = `no answer within ${MAX_STEPS} steps`
    } catch (err) {
      failure = (err as Error).message
    }
    const status = answer === null ? 'failed' : 'succeeded'
    sql.exec('UPDATE run SET status = ?, answer = ?', status, answer)
    const steps = messages.filter((m) => m.role === 'assistant').length
    const result = { id: run.id, ok: answer !== null, answer: answer ?? '', error: failure, steps }
    await Promise.all([
      started.then(() => writeIndex(this.env, run.id, run.task, status, steps)),
      run.callback_url ? sendCallback(this.env, run.callback_url, run.id, result) : null,
    ])
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url)
    if (url.pathname !== '/v1/runs' || request.method !== 'POST') {
      return error(404, 'not_found', `no route ${request.method} ${url.pathname}`)
    }
    const given = request.headers.get('authorization') ?? ''
    if (!given.startsWith('Bearer ') || !sameToken(given.slice(7), env.API_TOKEN)) {
      return error(401, 'unauthorized', 'send Authorization: Bearer <API_TOKEN>')
    }
    let body: unknown
    try {
      body = await request.json()
    } catch {
      return error(400, 'invalid_json', 'the body is not JSON')
    }
    const checked = checkBody(body, env)
    if (typeof checked === 'string') return error(400, 'invalid_request', checked)
    const id = crypto.randomUUID()
    await env.RUNS.get(env.RUNS.idFromName(id)).start({ id, ...checked })
    return Response.json({ id, status: 'queued' }, { status: 202 })
  },
} satisfies ExportedHandler<Env>
