/**
 * Drives the Worker and its RunStore objects from tests: HTTP through the Worker's own fetch,
 * alarms run by the test, a controllable clock, and a fake receiver for side effects.
 *
 * The clock starts a year ahead of real time. Every alarm the RunStore sets is therefore a year
 * in the real future and never fires on its own: only `runDurableObjectAlarm` runs it, so each
 * test decides exactly when the run advances.
 */
import { env, exports } from 'cloudflare:workers'
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test'
import { afterEach, beforeEach, expect, vi } from 'vitest'
import type { ApiRunResult } from '../../src/runs/api-result'
import type { RunView } from '../../src/runs/types'
import { FakeOpenAI, FAKE_OPENAI_HOST } from '../fakes/fake-openai'
import { Outbound, type FakeHandler } from '../fakes/outbound'
import { verifyFakes } from '../fakes/verify-fakes'

export const ORIGIN = 'https://edgeloop.test'
export const API_TOKEN = 'test-token'
export const WEBHOOK_SECRET = 'test-webhook-secret'
export const OPENAI_KEY = 'sk-test-fake-openai-0123456789'
export const AUTH = { authorization: `Bearer ${API_TOKEN}` }
export const JSON_AUTH = { ...AUTH, 'content-type': 'application/json' }
export const RECEIVER = 'receiver.test'

/** A request to the Worker (relative path), as a client would send it. */
export function api(path: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(`${ORIGIN}${path}`, init)
}

/** POST JSON with the API token. */
export function postJson(path: string, body: unknown, headers: HeadersInit = {}) {
  return api(path, {
    method: 'POST',
    headers: { ...JSON_AUTH, ...headers },
    body: JSON.stringify(body),
  })
}

/** Starts a run through `POST /v1/runs` and returns its id (asserts the 202). */
export async function startRun(body: Record<string, unknown>): Promise<string> {
  const res = await postJson('/v1/runs', body)
  const json = (await res.json()) as { id: string }
  expect(res.status, JSON.stringify(json)).toBe(202)
  return json.id
}

/** `GET /v1/runs/:id` (asserts the 200). */
export async function getRun(id: string): Promise<RunView> {
  const res = await api(`/v1/runs/${id}`, { headers: AUTH })
  expect(res.status).toBe(200)
  return (await res.json()) as RunView
}

/** The run's Durable Object stub. */
export function stubOf(id: string): DurableObjectStub {
  return env.RUNS.get(env.RUNS.idFromName(id))
}

/** `GET /v1/runs/:id/trace`: the run's RunResult (asserts the 200). */
export async function getTrace(id: string): Promise<ApiRunResult> {
  const res = await api(`/v1/runs/${id}/trace`, { headers: AUTH })
  expect(res.status).toBe(200)
  return (await res.json()) as ApiRunResult
}

/** Runs the scheduled alarm once, as the platform would when it is due. */
export function runAlarm(id: string): Promise<boolean> {
  return runDurableObjectAlarm(stubOf(id))
}

/**
 * Runs the run's alarm while it is due (at or before the test clock's now), as the platform
 * would; returns how many ran. A run waiting for a person keeps an alarm for the approval's
 * expiry, which is not due until the clock reaches it.
 */
export async function drainAlarms(id: string, max = 40): Promise<number> {
  let n = 0
  for (; n < max; n++) {
    const at = await runInDurableObject(stubOf(id), (_instance, state) => state.storage.getAlarm())
    if (at === null || at > Date.now() || !(await runAlarm(id))) break
  }
  return n
}

/** Approves or denies a pending call through the API. */
export function decide(
  id: string,
  callId: string,
  body: { decision: 'approve' | 'deny'; args_hash: string; by?: string; reason?: string },
) {
  return postJson(`/v1/runs/${id}/approvals/${callId}`, body)
}

/** The model's `call_post`: an `http_post` of `body` to the fake receiver at `path`. */
export function receiverPost(path = '/x', body: Record<string, unknown> = {}) {
  return {
    id: 'call_post',
    name: 'http_post',
    arguments: { url: `https://${RECEIVER}${path}`, body },
  }
}

/**
 * Starts a run with `http_post` whose scripted model has already asked for `call_post` (enqueue
 * it first), runs it to the approval and returns the pending call's args hash.
 */
export async function startAwaitingApproval(): Promise<{ id: string; argsHash: string }> {
  const id = await startRun({ task: 'Post', tools: ['http_post'] })
  await drainAlarms(id)
  return { id, argsHash: (await getRun(id)).pendingApprovals[0]!.argsHash }
}

/** Hex HMAC-SHA256, computed here independently of src/ (webhook and callback signatures). */
export async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(message))
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

/** `Date.now` under the test's control (the Durable Objects share the test's isolate). */
export class TestClock {
  #now: number
  readonly #spy

  constructor(start = Date.now() + 365 * 86_400_000) {
    this.#now = Math.floor(start / 1000) * 1000
    this.#spy = vi.spyOn(Date, 'now').mockImplementation(() => this.#now)
  }

  now(): number {
    return this.#now
  }

  advance(ms: number): void {
    this.#now += ms
  }

  restore(): void {
    this.#spy.mockRestore()
  }
}

/** A promise the test resolves when it chooses. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

/**
 * The fake `receiver.test`: counts every POST (http_post side effects and callbacks) with its
 * Idempotency-Key. `hold()` makes the next request wait until the test releases it.
 */
export class Receiver {
  readonly hits: { path: string; key: string | null; headers: Headers; body: string }[] = []
  #statuses: number[] = []
  #held: { promise: Promise<void>; open: () => void } | undefined
  #arrived: (() => void) | undefined
  #release: (() => void) | undefined

  /** Answers the next requests with these statuses (then 200). */
  answer(...statuses: number[]): this {
    this.#statuses.push(...statuses)
    return this
  }

  /** The next request blocks; resolves once it has arrived. Call `release()` to let it go. */
  hold(): Promise<void> {
    this.#held = gate()
    this.#release = this.#held.open
    return new Promise((resolve) => (this.#arrived = resolve))
  }

  release(): void {
    this.#release?.()
  }

  /** Distinct idempotency keys seen: the side effects a deduplicating server performed. */
  executions(): number {
    return new Set(this.hits.map((h) => h.key ?? `${this.hits.indexOf(h)}`)).size
  }

  readonly handler: FakeHandler = async (req) => {
    const body = await req.text()
    this.hits.push({
      path: new URL(req.url).pathname,
      key: req.headers.get('idempotency-key'),
      headers: req.headers,
      body,
    })
    const held = this.#held
    if (held) {
      this.#held = undefined
      this.#arrived?.()
      await held.promise
    }
    const status = this.#statuses.shift() ?? 200
    return Response.json({ received: true, status }, { status })
  }
}

/** The structured transition log lines written so far (from a console.log spy). */
export function transitionLines(spy: { mock: { calls: unknown[][] } }): Record<string, unknown>[] {
  return logLines(spy).filter((l) => l.msg === 'transition')
}

/** Every JSON log line written so far. */
export function logLines(spy: { mock: { calls: unknown[][] } }): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  for (const args of spy.mock.calls) {
    if (typeof args[0] !== 'string') continue
    try {
      out.push(JSON.parse(args[0]) as Record<string, unknown>)
    } catch {
      // not one of ours
    }
  }
  return out
}

/**
 * Records (and keeps off the test output) the Worker's structured log lines. The suite runs with
 * LOG_LEVEL=silent; these tests read the lines, so LOG_LEVEL is `info` until `restoreLogLevel`.
 */
export function captureLogs() {
  levelBefore.push(env.LOG_LEVEL)
  ;(env as { LOG_LEVEL?: string }).LOG_LEVEL = 'info'
  return vi.spyOn(console, 'log').mockImplementation(() => {})
}
const levelBefore: (string | undefined)[] = []

/** Puts back the LOG_LEVEL `captureLogs` replaced. */
export function restoreLogLevel() {
  ;(env as { LOG_LEVEL?: string }).LOG_LEVEL = levelBefore.pop()
}

/** One test's fakes, installed by `useServiceFakes`. */
export interface ServiceFakes {
  readonly clock: TestClock
  readonly logs: ReturnType<typeof captureLogs>
  readonly ai: FakeOpenAI
  readonly receiver: Receiver
  readonly outbound: Outbound
}

export interface ServiceFakesOptions {
  /** Route `api.openai.test` to the FakeOpenAI (default true); false leaves that host unknown. */
  openai?: boolean
  /** Route `receiver.test` to the Receiver (default true); false leaves that host unknown. */
  receiver?: boolean
  /** More fake hosts (or replacements for the defaults), built per test from its fakes. */
  hosts?: (fakes: Pick<ServiceFakes, 'ai' | 'receiver'>) => Record<string, FakeHandler>
}

/**
 * Gives every test of the file a fresh TestClock, silenced logs, a FakeOpenAI and a Receiver
 * behind a strict Outbound, and checks and restores them after it. The returned object reads the
 * current test's fakes, so it is only usable inside tests and hooks.
 */
export function useServiceFakes(options: ServiceFakesOptions = {}): ServiceFakes {
  let current: ServiceFakes | undefined
  beforeEach(() => {
    const clock = new TestClock()
    const logs = captureLogs()
    const ai = new FakeOpenAI()
    const receiver = new Receiver()
    const outbound = new Outbound()
    if (options.openai ?? true) outbound.on(FAKE_OPENAI_HOST, ai.handler)
    if (options.receiver ?? true) outbound.on(RECEIVER, receiver.handler)
    for (const [host, handler] of Object.entries(options.hosts?.({ ai, receiver }) ?? {})) {
      outbound.on(host, handler)
    }
    current = { clock, logs, ai, receiver, outbound: outbound.install() }
  })
  afterEach(() => {
    const fakes = current
    current = undefined
    try {
      if (fakes) verifyFakes(fakes.outbound, fakes.ai)
    } finally {
      fakes?.clock.restore()
      restoreLogLevel()
      vi.restoreAllMocks()
    }
  })
  const now = (): ServiceFakes => {
    if (!current) throw new Error('useServiceFakes: the fakes exist only inside a test or hook')
    return current
  }
  return {
    get clock() {
      return now().clock
    },
    get logs() {
      return now().logs
    },
    get ai() {
      return now().ai
    },
    get receiver() {
      return now().receiver
    },
    get outbound() {
      return now().outbound
    },
  }
}
