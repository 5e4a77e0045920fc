/**
 * Where the crash test kills the runtime: one row per point. A row arms the crash on
 * the session once the run exists (an interception on the network, or a check on each view of
 * the run) and says what the run must look like afterwards, besides the invariants that hold
 * for every run (invariants.ts). Adding a point or a tool kind is adding a row.
 */
import { reply, type FakeCall, type FakeReply } from '../../fakes/fake-openai'
import type { RunView } from '../../../src/runs/types'
import type { NetworkRequest } from '../fake-network'
import { MODEL_HOST, RECEIVER_HOST, type CrashSession } from './crash-session'
import { modelStepOf } from './step-model'

/** The run a point is armed on; its id and task are known once `started` resolves. */
export interface RunRef {
  id: string
  task: string
  tag: string
  started: Promise<void>
}

/** A RunRef for a run not started yet, with the `resolve` that fills it in. */
export function runRef(
  tag: string,
): RunRef & { resolve: (r: { id: string; task: string }) => void } {
  let resolve!: () => void
  const ref = {
    id: '',
    task: '',
    tag,
    started: new Promise<void>((r) => (resolve = r)),
    resolve: (r: { id: string; task: string }) => {
      Object.assign(ref, r)
      resolve()
    },
  }
  return ref
}

export interface CrashPoint {
  name: string
  /** Server settings for this point (CONFIRM_POLICY, HTTP_POST_IDEMPOTENT…). */
  bindings?: Record<string, string>
  /** The model's replies by step; the standard read → post → answer run by default. */
  script?: (tag: string) => FakeReply[]
  callback?: boolean
  /** Arms the crash once the run has started. */
  arm?: (session: CrashSession, run: RunRef) => void
  /** The tools the run may use (default http_get and http_post). */
  tools?: string[]
  /** Every approval is approved with these arguments instead of the model's (an edit). */
  edit?: Record<string, unknown>
  /** How the run starts: `POST /v1/runs` (default) or an MCP client's `tools/call` as a task. */
  via?: 'api' | 'mcp'
  /** Sees every view of the run before the driver acts on it; may kill instead. */
  onView?: (session: CrashSession, run: RunRef, view: RunView) => void | Promise<void>
  /** What this point leaves behind, on top of the invariants. */
  expect: {
    stopReason: string
    /** The kind of the `call_post` side effect in the trace. */
    postKind?: string
    /** How many times `call_post` reached the receiver. */
    postHits?: number
    /** How many chat-completions requests the run made. */
    modelAsks?: number
    callbackAttempts?: number
  }
}

export const readCall = (tag: string, id = 'call_read'): FakeCall => ({
  id,
  name: 'http_get',
  arguments: { url: `https://${RECEIVER_HOST}/status/${tag}/${id}` },
})

export const postCall = (id = 'call_post'): FakeCall => ({
  id,
  name: 'http_post',
  arguments: { url: `https://${RECEIVER_HOST}/effect`, body: { value: 42 } },
})

/** Step 0 reads (http_get), step 1 records (http_post, a side effect), step 2 answers. */
export function standardScript(tag: string): FakeReply[] {
  return [
    reply.toolCalls([readCall(tag)], { content: 'Check the status first.' }),
    reply.toolCalls([postCall()], { content: 'Status is green: record 42.' }),
    reply.text('Recorded 42.'),
  ]
}

const isModelStep = (step: number) => (r: NetworkRequest) =>
  r.host === MODEL_HOST && modelStepOf(r.body).step === step
const isPost = (r: NetworkRequest) => r.method === 'POST' && r.path === '/effect'
const isRead = (id: string) => (r: NetworkRequest) => r.method === 'GET' && r.path.endsWith(id)
const IDEMPOTENT = { HTTP_POST_IDEMPOTENT: 'true' }
const ASK = { CONFIRM_POLICY: 'ask' }
/** The arguments an approver sends instead of the model's: another value to record. */
export const EDITED_POST = { url: `https://${RECEIVER_HOST}/effect`, body: { value: 43 } }
const WITH_ASK_PERSON = { ENABLED_TOOLS: 'calculator,http_get,http_post,ask_person' }

/** Step 0 asks a person (ask_person), step 1 records (http_post), step 2 answers. */
function questionScript(): FakeReply[] {
  return [
    reply.toolCalls(
      [
        {
          id: 'call_ask',
          name: 'ask_person',
          arguments: { question: 'Record?', choices: ['yes', 'no'] },
        },
      ],
      { content: 'Ask first.' },
    ),
    reply.toolCalls([postCall()], { content: 'They said yes: record 42.' }),
    reply.text('Recorded 42.'),
  ]
}

/** Kills the runtime when the first request `match`es: `before` it reaches its host, or in flight. */
function killAt(match: (r: NetworkRequest) => boolean, when: 'before' | 'in_flight', why: string) {
  return (session: CrashSession) => {
    session.network.intercept({ match, when, run: () => session.kill(why) })
  }
}

/** Kills once, the first time `when` holds for a view of the run. */
function killOnView(when: (view: RunView) => boolean, why: string, first?: CrashPoint['onView']) {
  let done = false
  return async (session: CrashSession, run: RunRef, view: RunView) => {
    if (done || !when(view)) return
    done = true
    await first?.(session, run, view)
    session.kill(why)
  }
}

/** Kills while a decision on the first pending approval is in the Worker (sent, not answered). */
function killWhileApproving(why: string, edit?: Record<string, unknown>) {
  return killOnView(
    (v) => v.pendingApprovals.length > 0,
    why,
    async (session, run, view) => {
      const p = view.pendingApprovals[0]!
      session.approve(run.id, p.callId, p.argsHash, edit).catch(() => {})
      await new Promise((r) => setTimeout(r, 5))
    },
  )
}

export const CRASH_POINTS: CrashPoint[] = [
  {
    name: 'during a model call',
    arm: killAt(isModelStep(0), 'in_flight', 'model call of step 0 in flight'),
    expect: { stopReason: 'finish', postKind: 'ok', postHits: 1, modelAsks: 4 },
  },
  {
    name: 'after the reply is stored (its read-only call in flight)',
    arm: killAt(isRead('call_read'), 'in_flight', 'http_get of step 0 in flight'),
    expect: { stopReason: 'finish', postKind: 'ok', postHits: 1, modelAsks: 3 },
  },
  {
    name: 'between the started record and the request (not idempotent)',
    arm: killAt(isPost, 'before', 'http_post left the Worker, never reached the receiver'),
    expect: { stopReason: 'finish', postKind: 'outcome_unknown', postHits: 0, modelAsks: 3 },
  },
  {
    name: 'between the started record and the request (idempotent)',
    bindings: IDEMPOTENT,
    arm: killAt(isPost, 'before', 'http_post left the Worker, never reached the receiver'),
    expect: { stopReason: 'finish', postKind: 'ok', postHits: 1, modelAsks: 3 },
  },
  {
    name: 'while the side-effect request is in flight (not idempotent)',
    arm: killAt(isPost, 'in_flight', 'http_post in flight'),
    expect: { stopReason: 'finish', postKind: 'outcome_unknown', postHits: 1, modelAsks: 3 },
  },
  {
    name: 'while the side-effect request is in flight (idempotent)',
    bindings: IDEMPOTENT,
    arm: killAt(isPost, 'in_flight', 'http_post in flight'),
    expect: { stopReason: 'finish', postKind: 'ok', postHits: 2, modelAsks: 3 },
  },
  {
    name: "after the side effect's result is stored",
    arm: killAt(isModelStep(2), 'in_flight', 'model call after the http_post result'),
    expect: { stopReason: 'finish', postKind: 'ok', postHits: 1, modelAsks: 4 },
  },
  {
    name: 'during an approval (waiting for a person)',
    bindings: ASK,
    onView: killOnView((v) => v.pendingApprovals.length > 0, 'awaiting approval'),
    expect: { stopReason: 'finish', postKind: 'ok', postHits: 1, modelAsks: 3 },
  },
  {
    name: 'during an approval (the decision request cut off)',
    bindings: ASK,
    onView: killWhileApproving('decision request in the Worker'),
    expect: { stopReason: 'finish', postKind: 'ok', postHits: 1, modelAsks: 3 },
  },
  {
    name: 'an edited approval whose decision request is cut off',
    bindings: ASK,
    edit: EDITED_POST,
    onView: killWhileApproving('edited decision request in the Worker', EDITED_POST),
    expect: { stopReason: 'finish', postKind: 'ok', postHits: 1, modelAsks: 3 },
  },
  {
    name: 'an edited call in flight (not idempotent)',
    bindings: ASK,
    edit: EDITED_POST,
    arm: killAt(isPost, 'in_flight', 'edited http_post in flight'),
    expect: { stopReason: 'finish', postKind: 'outcome_unknown', postHits: 1, modelAsks: 3 },
  },
  {
    name: 'an edited call between its started record and the request (idempotent)',
    bindings: { ...ASK, ...IDEMPOTENT },
    edit: EDITED_POST,
    arm: killAt(isPost, 'before', 'edited http_post left the Worker, never reached the receiver'),
    expect: { stopReason: 'finish', postKind: 'ok', postHits: 1, modelAsks: 3 },
  },
  {
    name: 'an answer to a question given while the object dies',
    bindings: WITH_ASK_PERSON,
    tools: ['http_post', 'ask_person'],
    script: questionScript,
    onView: killOnView(
      (v) => v.pendingApprovals.some((p) => p.kind === 'question'),
      'answer request in the Worker',
      async (session, run, view) => {
        const p = view.pendingApprovals[0]!
        session.answer(run.id, p.callId, p.argsHash, 'yes').catch(() => {})
        await new Promise((r) => setTimeout(r, 5))
      },
    ),
    expect: { stopReason: 'finish', postKind: 'ok', postHits: 1, modelAsks: 3 },
  },
  {
    name: 'started by an MCP client, the side effect in flight (not idempotent)',
    via: 'mcp',
    arm: killAt(isPost, 'in_flight', 'http_post of a served run in flight'),
    expect: { stopReason: 'finish', postKind: 'outcome_unknown', postHits: 1, modelAsks: 3 },
  },
  {
    name: 'started by an MCP client, approved while the object dies',
    via: 'mcp',
    bindings: ASK,
    onView: killWhileApproving('decision on a served run in the Worker'),
    expect: { stopReason: 'finish', postKind: 'ok', postHits: 1, modelAsks: 3 },
  },
  {
    name: 'during a cancel (the side effect in flight)',
    arm: (session, run) =>
      session.network.intercept({
        match: isPost,
        when: 'in_flight',
        run: async () => {
          await run.started
          const res = await session.cancel(run.id)
          if (res.status !== 202) throw new Error(`cancel answered ${res.status}`)
          session.kill('cancel accepted while http_post in flight')
        },
      }),
    expect: { stopReason: 'cancelled', postKind: 'outcome_unknown', postHits: 1, modelAsks: 2 },
  },
  {
    name: 'during a cancel (a model call in flight)',
    arm: (session, run) =>
      session.network.intercept({
        match: isModelStep(1),
        when: 'in_flight',
        run: async () => {
          await run.started
          await session.cancel(run.id)
          session.kill('cancel accepted while the model call of step 1 in flight')
        },
      }),
    expect: { stopReason: 'cancelled', postHits: 0, modelAsks: 2 },
  },
  {
    name: 'during delivery of the callback',
    callback: true,
    arm: killAt((r) => r.path === '/callback', 'in_flight', 'callback in flight'),
    expect: { stopReason: 'finish', postKind: 'ok', postHits: 1, callbackAttempts: 2 },
  },
  {
    name: 'during one of parallel read-only calls',
    script: (tag) => [
      reply.toolCalls([readCall(tag, 'call_read_a'), readCall(tag, 'call_read_b')]),
      reply.toolCalls([postCall()]),
      reply.text('Recorded 42.'),
    ],
    arm: killAt(isRead('call_read_b'), 'in_flight', 'second read-only call in flight'),
    expect: { stopReason: 'finish', postKind: 'ok', postHits: 1, modelAsks: 3 },
  },
]
