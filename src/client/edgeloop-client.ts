import type {
  Agent,
  AgentList,
  ApprovalPage,
  Cancel,
  Cancelling,
  CreatedRun,
  CreateRun,
  DecisionResult,
  Deleted,
  Me,
  RunEvent,
  RunApprovals,
  RunExport,
  RunListEvent,
  RunPage,
  RunResult,
  RunView,
  StoredObservation,
} from './api-types.js'
import { EdgeloopError } from './edgeloop-error.js'
import { sseFrames } from './sse-frames.js'

export interface EdgeloopClientOptions {
  /** The Worker's origin, e.g. `https://edgeloop.example.workers.dev`. */
  baseUrl: string
  /** The API_TOKEN. */
  token: string
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: (request: Request) => Promise<Response>
}

export interface EventsOptions {
  /** Start after this sequence number (what the last event you saw had). */
  after?: number
  signal?: AbortSignal
  /** Reconnects when the connection drops before `run_finished` (default 5 times in a row). */
  maxReconnects?: number
  /**
   * Told each live piece of a reply as the model writes it (`answer_delta`, `thought_delta`).
   * Sent only to a connection that is open while the model writes; never replayed.
   */
  onDelta?: (delta: LiveDelta) => void
}

export interface RunListOptions {
  /** Resume after this event (the `eventId` of the last change you saw). */
  after?: string
  signal?: AbortSignal
  /** Reconnects when a connection closes without a change (default 5 times in a row). */
  maxReconnects?: number
}

/** A run-list stream event with its id, which `after` takes to resume there. */
export type RunListChange = RunListEvent & { eventId: string }

/**
 * A live piece of the reply to step `step` (docs/streaming.md); not a stored event. Text of a
 * lower `attempt` for the same step belongs to a call whose answer was lost: drop it.
 */
export interface LiveDelta {
  type: 'answer_delta' | 'thought_delta'
  step: number
  /** Which model call for the step: 1, then one more for each call whose answer was lost. */
  attempt: number
  delta: string
}

/**
 * A small typed client of the edgeloop HTTP API (docs/client.md). Its types are generated from
 * the service's /openapi.json, and a test fails when the two disagree.
 */
export class EdgeloopClient {
  readonly #base: string
  readonly #token: string
  readonly #fetch: (request: Request) => Promise<Response>

  constructor(options: EdgeloopClientOptions) {
    if (!options.baseUrl || !options.token) {
      throw new TypeError('EdgeloopClient needs options "baseUrl" and "token" (the API_TOKEN)')
    }
    this.#base = options.baseUrl.replace(/\/+$/, '')
    this.#token = options.token
    this.#fetch = options.fetch ?? ((request) => fetch(request))
  }

  /** Starts a run; the same `idempotencyKey` returns the same run. */
  startRun(body: CreateRun, options: { idempotencyKey?: string } = {}) {
    const headers: Record<string, string> = {}
    if (options.idempotencyKey) headers['Idempotency-Key'] = options.idempotencyKey
    return this.#json<CreatedRun>('POST', '/v1/runs', body, headers)
  }

  /** The client's token: its name (what decisions are recorded under) and its scopes. */
  me() {
    return this.#json<Me>('GET', '/v1/me')
  }

  /** The agents runs may name: tools, model, protocol, output schema. */
  listAgents() {
    return this.#json<AgentList>('GET', '/v1/agents')
  }

  /** One agent with its instructions; an unknown name is an EdgeloopError `agent_not_found`. */
  getAgent(name: string) {
    return this.#json<Agent>('GET', `/v1/agents/${encodeURIComponent(name)}`)
  }

  getRun(id: string) {
    return this.#json<RunView>('GET', `/v1/runs/${encodeURIComponent(id)}`)
  }

  trace(id: string) {
    return this.#json<RunResult>('GET', `/v1/runs/${encodeURIComponent(id)}/trace`)
  }

  /** A truncated call's whole output, by the `handle` in the trace. */
  readObservation(id: string, handle: string) {
    return this.#json<StoredObservation>(
      'GET',
      `/v1/runs/${encodeURIComponent(id)}/observations/${encodeURIComponent(handle)}`,
    )
  }

  listRuns(
    query: {
      status?: RunView['status']
      /** Only the runs of this conversation (its first run's id). */
      conversation?: string
      /** Only the runs of this agent. */
      agent?: string
      /** Only the child runs this run started by delegating. */
      parent?: string
      limit?: number
      cursor?: string
    } = {},
  ) {
    return this.#json<RunPage>('GET', `/v1/runs${search(query)}`)
  }

  /**
   * The child runs run `id` started by delegating, newest first (from the run index; the run's
   * own view lists them too, under `children`, with their current status).
   */
  listChildren(id: string, query: { limit?: number; cursor?: string } = {}) {
    return this.listRuns({ ...query, parent: id })
  }

  /** A run's pending approvals and those of its descendants (each naming its run). */
  runApprovals(id: string) {
    return this.#json<RunApprovals>('GET', `/v1/runs/${encodeURIComponent(id)}/approvals`)
  }

  listApprovals(query: { limit?: number; cursor?: string } = {}) {
    return this.#json<ApprovalPage>('GET', `/v1/approvals${search(query)}`)
  }

  /**
   * Approves or denies a pending call; `argsHash` is the one you were shown. The decider is
   * recorded as the name of the client's token.
   */
  decide(
    id: string,
    callId: string,
    body: { decision: 'approve' | 'deny'; argsHash: string; reason?: string },
  ) {
    const { argsHash, ...rest } = body
    return this.#json<DecisionResult>(
      'POST',
      `/v1/runs/${encodeURIComponent(id)}/approvals/${encodeURIComponent(callId)}`,
      { ...rest, args_hash: argsHash },
    )
  }

  cancel(id: string, body: Cancel = {}) {
    return this.#json<Cancelling>('POST', `/v1/runs/${encodeURIComponent(id)}/cancel`, body)
  }

  /**
   * Deletes the run and every copy of it (the token needs runs:delete). Idempotent; `deleting`
   * means a slice in flight is stopping first, and the run already reads as gone.
   */
  deleteRun(id: string) {
    return this.#json<Deleted>('DELETE', `/v1/runs/${encodeURIComponent(id)}`)
  }

  /** The whole run as one document: its view, kernel state, trace, observations and events. */
  exportRun(id: string) {
    return this.#json<RunExport>('GET', `/v1/runs/${encodeURIComponent(id)}/export`)
  }

  /**
   * The run's events, oldest first, until `run_finished`. A dropped connection is resumed after
   * the last event received (no gap, no duplicate).
   */
  async *events(id: string, options: EventsOptions = {}): AsyncGenerator<RunEvent> {
    let after = options.after ?? 0
    let failures = 0
    for (;;) {
      const res = await this.#send(
        'GET',
        `/v1/runs/${encodeURIComponent(id)}/events`,
        undefined,
        {
          Accept: 'text/event-stream',
          ...(after ? { 'Last-Event-ID': String(after) } : {}),
        },
        options.signal,
      )
      let progressed = false
      for await (const frame of sseFrames(res.body!)) {
        // Live pieces have no id: they never move the resume point.
        if (frame.event === 'answer_delta' || frame.event === 'thought_delta') {
          const { step, attempt, delta } = JSON.parse(frame.data) as Omit<LiveDelta, 'type'>
          options.onDelta?.({ type: frame.event, step, attempt, delta })
          continue
        }
        const event = JSON.parse(frame.data) as RunEvent
        after = event.seq
        progressed = true
        yield event
        if (event.type === 'run_finished') return
      }
      // The server ends the stream only after run_finished; an end before it is a lost connection.
      failures = progressed ? 0 : failures + 1
      if (failures > (options.maxReconnects ?? 5)) {
        throw new EdgeloopError(0, 'stream_lost', `the event stream of ${id} kept closing early`)
      }
    }
  }

  /**
   * Changes of the run list as they reach the index (docs/http-api.md#the-run-list-stream):
   * `run` (its list row and pending approvals), `run_deleted`, and `ready` once caught up; list
   * again (`listRuns`, `listApprovals`) when `ready.relist` is true. Runs until `signal` aborts;
   * a dropped connection is resumed after the last event received.
   */
  async *runListChanges(options: RunListOptions = {}): AsyncGenerator<RunListChange> {
    let after = options.after
    let failures = 0
    for (;;) {
      const res = await this.#send(
        'GET',
        '/v1/runs/stream',
        undefined,
        { Accept: 'text/event-stream', ...(after ? { 'Last-Event-ID': after } : {}) },
        options.signal,
      )
      let progressed = false
      for await (const frame of sseFrames(res.body!)) {
        // A reader too far behind is sent stream_closed (no id): it reconnects from `after`.
        if (!frame.id) continue
        after = frame.id
        progressed = true
        yield { ...(JSON.parse(frame.data) as RunListEvent), eventId: frame.id }
      }
      failures = progressed ? 0 : failures + 1
      if (failures > (options.maxReconnects ?? 5)) {
        throw new EdgeloopError(0, 'stream_lost', 'the run-list stream kept closing early')
      }
    }
  }

  async #json<T>(method: string, path: string, body?: unknown, headers = {}): Promise<T> {
    const res = await this.#send(method, path, body, headers)
    return (await res.json()) as T
  }

  async #send(
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<Response> {
    const init: RequestInit = {
      method,
      headers: {
        Authorization: `Bearer ${this.#token}`,
        ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        ...headers,
      },
    }
    if (body !== undefined) init.body = JSON.stringify(body)
    if (signal) init.signal = signal
    const res = await this.#fetch(new Request(`${this.#base}${path}`, init))
    if (res.ok) return res
    const text = await res.text()
    let error: { code?: string; message?: string; details?: unknown } = {}
    try {
      error = (JSON.parse(text) as { error?: typeof error }).error ?? {}
    } catch {
      // not JSON: a proxy's page, reported by status below
    }
    throw new EdgeloopError(
      res.status,
      error.code ?? 'http_error',
      error.message ?? `${method} ${path} answered HTTP ${res.status}`,
      error.details,
    )
  }
}

function search(query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v))
  const s = params.toString()
  return s ? `?${s}` : ''
}
