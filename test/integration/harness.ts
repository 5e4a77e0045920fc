/**
 * The joined path for integration tests: the kernel's step machine driving the real
 * `OpenAIModel` (the `openai` package) against `FakeOpenAI`, through the strict outbound fake,
 * with the real tools from `tools/`. The `openai` client retries on its own timers: tests that
 * retry run on a faked clock (`useFakeClock`) and read the waits from when requests arrived.
 */
import { afterEach, beforeEach, expect, vi } from 'vitest'
import { unframeObservation } from '../../src/kernel/tool-output'
import {
  createRunState,
  MemoryObservationStore,
  runSlice,
  ToolRegistry,
  type Deps,
  type NewRunInput,
  type RunState,
  type Tool,
} from '../../src/kernel/index'
import { OpenAIModel, type OpenAIModelOptions } from '../../src/llm/openai-model'
import {
  FAKE_OPENAI_BASE_URL,
  FAKE_OPENAI_HOST,
  FAKE_OPENAI_KEY,
  FakeOpenAI,
  type ReceivedBody,
} from '../fakes/fake-openai'
import { Outbound, type FakeHandler } from '../fakes/outbound'
import { verifyFakes } from '../fakes/verify-fakes'

/** A slice with no limits: run until done or until a person must decide. */
export const UNLIMITED = { maxTransitions: Infinity, maxWallMs: Infinity, maxBytes: Infinity }

/** The fake receiver of `http_post` (and the host the HTTP tools are allowed to reach). */
export const RECEIVER_HOST = 'receiver.test'

/** The fakes one test talks to; `restore()` in afterEach fails on any unexpected or refused request. */
export interface Wire {
  api: FakeOpenAI
  outbound: Outbound
  /** Time between consecutive requests to the fake provider (the client's waits, on a fake clock). */
  readonly delays: number[]
  /** The real adapter pointed at the fake provider. */
  model(options?: Partial<OpenAIModelOptions>): OpenAIModel
  restore(): void
}

/** Installs the fake provider (and any extra hosts) as the only reachable outbound hosts. */
export function installWire(hosts: Record<string, FakeHandler> = {}): Wire {
  const api = new FakeOpenAI()
  const outbound = new Outbound().on(FAKE_OPENAI_HOST, api.handler)
  for (const [host, handler] of Object.entries(hosts)) outbound.on(host, handler)
  outbound.install()
  return {
    api,
    outbound,
    get delays() {
      return api.arrivals.slice(1).map((t, i) => t - api.arrivals[i]!)
    },
    model: (options = {}) =>
      new OpenAIModel({
        baseURL: FAKE_OPENAI_BASE_URL,
        apiKey: FAKE_OPENAI_KEY,
        model: 'gpt-test',
        ...options,
      }),
    restore: () => verifyFakes(outbound, api),
  }
}

/**
 * Installs a fresh wire (`installWire(hosts)`) before each test of the file and restores it after,
 * failing the test on any unexpected request. The returned wire reads the current test's fakes.
 */
export function useWire(hosts: Record<string, FakeHandler> = {}): Wire {
  let current: Wire | undefined
  beforeEach(() => {
    current = installWire(hosts)
  })
  afterEach(() => {
    const wire = current
    current = undefined
    wire?.restore()
  })
  const now = (): Wire => {
    if (!current) throw new Error('useWire: the wire exists only inside a test or hook')
    return current
  }
  return {
    get api() {
      return now().api
    },
    get outbound() {
      return now().outbound
    },
    get delays() {
      return now().delays
    },
    model: (options) => now().model(options),
    restore: () => now().restore(),
  }
}

/**
 * Fakes the clock (setTimeout, clearTimeout, Date) for each test of the file, and jitter: the
 * `openai` client's backoff is `base · 2^n · (1 - random · 0.25)`, so random() = 0.5 takes 12.5 %
 * off. Drive a promise to its end with `settle`.
 */
export function useFakeClock(start = '2026-01-01T00:00:00Z') {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.parse(start) })
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
  })
  afterEach(() => {
    vi.useRealTimers()
    vi.restoreAllMocks()
  })
}

/** Runs the faked timers until `promise` settles (every wait it is in passes at once). */
export async function settle<T>(promise: Promise<T>): Promise<T> {
  let done = false
  const watched = promise.finally(() => void (done = true))
  watched.catch(() => {})
  // Between timers the fakes answer on microtasks; a bounded loop, then a plain wait.
  for (let i = 0; i < 10_000 && !done; i++) {
    if (vi.getTimerCount() > 0) await vi.advanceTimersToNextTimerAsync()
    else await Promise.resolve()
  }
  return watched
}

/** A receiver that answers every POST with 201 and `{"received":true}`. */
export const created: FakeHandler = () =>
  Response.json({ received: true }, { status: 201, statusText: 'Created' })

/** A fresh run and the deps to advance it (no confirm hook: `ask` waits for `decideApproval`). */
export function startRun(
  tools: Tool[],
  model: Deps['model'],
  input: Partial<NewRunInput> = {},
  deps: Partial<Deps> = {},
): { state: RunState; deps: Deps; registry: ToolRegistry } {
  const registry = new ToolRegistry(tools)
  const state = createRunState({
    id: 'run_int',
    task: 'integration task',
    tools: registry.names(),
    ...input,
  })
  return {
    state,
    registry,
    deps: { model, registry, observations: new MemoryObservationStore(), ...deps },
  }
}

/** Advances until the run is done or waits for a person. */
export async function runUntilStill(state: RunState, deps: Deps) {
  return runSlice(state, deps, UNLIMITED)
}

export { framed } from '../fakes/scripted-model'

/**
 * The `tool` messages of a request body, as `[tool_call_id, observation]` pairs in order: each
 * message must hold its observation in the tool-output frame, and the pair holds what is inside.
 */
export function toolMessages(body: ReceivedBody): [string, string][] {
  return body.messages
    .filter((m) => m.role === 'tool')
    .map((m) => {
      expect(m.content).toMatch(/^<tool_output tool="[^"]+">\n[\s\S]*\n<\/tool_output>$/)
      return [m.tool_call_id, unframeObservation(m.content)]
    })
}
