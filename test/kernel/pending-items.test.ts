import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  checkEditedArgs,
  createRunState,
  decideApproval,
  defineTool,
  expireApprovals,
  pendingApprovals,
  personNeeded,
  runSlice,
  toRunResult,
  type ResolvedItem,
  type RunState,
} from '../../src/kernel/index'
import { askPerson } from '../../tools/ask-person'
import {
  fakeClock,
  nativeAnswer,
  nativeCall,
  nativeCalls,
  ScriptedModel,
  textFinish,
} from '../fakes/scripted-model'
import { sliceDeps, UNLIMITED } from './harness'
import { approveSaved, loadSaved, type Rows } from './saved-states'
import v4TextRows from '../fixtures/run-state-v4/text-awaiting-approval.json'

/**
 * Pending items of every kind through the kernel's exports (docs/human-in-the-loop.md): a tool
 * outside the kernel makes a run wait on a `connect` item when it runs (`personNeeded`), or on
 * a `question` before it runs (`person`); one lifecycle decides them.
 */

const TTL_S = 600

/** A tool that needs an account connected before it can work: what an MCP server's tool does. */
function connectingTool(seen: (ResolvedItem | null)[]) {
  return defineTool({
    name: 'fetch_tickets',
    description: 'Fetch the open tickets.',
    params: z.object({ project: z.string() }),
    returns: 'The tickets.',
    handler: ({ project }, ctx) => {
      seen.push(ctx.person)
      if (!ctx.person) {
        return personNeeded({
          kind: 'connect',
          message: 'Connect your tracker account',
          details: { server: 'tracker', url: 'https://tracker.test/authorize?state=s1' },
        })
      }
      return `3 tickets in ${project} (connected by ${ctx.person.by})`
    },
  })
}

function run(tools: Parameters<typeof sliceDeps>[1], firstCall: ReturnType<typeof nativeCall>) {
  const clock = fakeClock()
  const model = new ScriptedModel((_req, turn) => {
    clock.advance(1000)
    return turn === 0 ? nativeCalls([firstCall], 'Need data.') : nativeAnswer('done')
  })
  const deps = sliceDeps(model, tools, clock.now)
  const state = createRunState({
    id: 'run_p',
    task: 'work',
    tools: tools.map((t) => t.name),
    policy: { mode: 'ask' },
    budget: { approvalTtlSeconds: TTL_S, maxSeconds: 60 },
    now: clock.now(),
  })
  return { clock, model, deps, state }
}

function item(state: RunState) {
  return pendingApprovals(state)[0]!.call.approval!
}

describe('a connect item made by a tool when it runs (personNeeded)', () => {
  async function waiting() {
    const seen: (ResolvedItem | null)[] = []
    const r = run([connectingTool(seen)], nativeCall('fetch_tickets', { project: 'ops' }, 'c1'))
    const out = await runSlice(r.state, r.deps, UNLIMITED)
    return { ...r, seen, out }
  }

  it('waits on the item, bound to what it asks, listed among the pending', async () => {
    const { out, seen } = await waiting()
    expect(out.end).toBe('awaiting_approval')
    expect(seen).toEqual([null])
    expect(item(out.state)).toMatchObject({
      kind: 'connect',
      decision: null,
      ask: { message: 'Connect your tracker account', details: { server: 'tracker' } },
      editSchema: null,
    })
    expect(item(out.state).hash).toMatch(/^[0-9a-f]{64}$/)
  })

  it('resolved: the handler runs again and sees who resolved it and with what', async () => {
    const { out, seen, deps, clock } = await waiting()
    const decided = decideApproval(out.state, {
      callId: 'c1',
      kind: 'connect',
      decision: 'approve',
      argsHash: item(out.state).hash,
      answer: { connected: true },
      by: 'api:alice',
      now: clock.now(),
    })
    expect(decided.ok).toBe(true)
    if (!decided.ok) return
    const done = await runSlice(decided.state, deps, UNLIMITED)
    expect(done.end).toBe('done')
    expect(seen).toEqual([null, { kind: 'connect', answer: { connected: true }, by: 'api:alice' }])
    const call = toRunResult(done.state).steps[0]!.calls[0]!
    expect(call.observation).toBe('3 tickets in ops (connected by api:alice)')
    expect(call.approval).toMatchObject({ kind: 'connect', decision: 'approved' })
  })

  it('declined: the observation says the account was not connected, and the tool does not run again', async () => {
    const { out, seen, deps, clock } = await waiting()
    const decided = decideApproval(out.state, {
      callId: 'c1',
      kind: 'connect',
      decision: 'deny',
      argsHash: item(out.state).hash,
      by: 'api:alice',
      now: clock.now(),
    })
    if (!decided.ok) throw new Error(decided.message)
    const done = await runSlice(decided.state, deps, UNLIMITED)
    expect(seen).toHaveLength(1)
    expect(toRunResult(done.state).steps[0]!.calls[0]!.observation).toContain(
      'the account was not connected: api:alice declined',
    )
  })

  it.each([
    ['another kind', { kind: 'approval' as const }, 'wrong_kind'],
    ['a stale hash', { argsHash: '0'.repeat(64) }, 'hash_mismatch'],
    ['after it expired', { now: Infinity }, 'approval_expired'],
  ])('a decision for %s is refused and the item stays pending', async (_l, over, code) => {
    const { out, clock } = await waiting()
    const refused = decideApproval(out.state, {
      callId: 'c1',
      kind: 'connect',
      decision: 'approve',
      argsHash: item(out.state).hash,
      by: 'api:alice',
      now: clock.now(),
      ...over,
    })
    expect(refused).toMatchObject({ ok: false, code })
    expect(item(out.state).decision).toBeNull()
  })
})

describe('a question item made before the call runs (ask_person)', () => {
  const ASK = { question: 'Which region?', choices: ['eu', 'us'] }

  async function waiting() {
    const r = run([askPerson], nativeCall('ask_person', ASK, 'q1'))
    const out = await runSlice(r.state, r.deps, UNLIMITED)
    return { ...r, out }
  }

  it('is made with the step: kind question, the question and choices shown', async () => {
    const { out } = await waiting()
    expect(out.end).toBe('awaiting_approval')
    expect(item(out.state)).toMatchObject({
      kind: 'question',
      ask: { message: 'Which region?', choices: ['eu', 'us'], schema: null },
    })
  })

  it('answered: the answer is the observation, first decision wins', async () => {
    const { out, deps, clock } = await waiting()
    const input = {
      callId: 'q1',
      kind: 'question' as const,
      decision: 'approve' as const,
      argsHash: item(out.state).hash,
      answer: 'eu',
      by: 'api:bob',
      now: clock.now(),
    }
    const decided = decideApproval(out.state, input)
    if (!decided.ok) throw new Error(decided.message)
    expect(
      decideApproval(decided.state, { ...input, answer: 'us', by: 'api:carol' }),
    ).toMatchObject({ ok: false, code: 'already_decided', decidedBy: 'api:bob' })
    const done = await runSlice(decided.state, deps, UNLIMITED)
    expect(toRunResult(done.state).steps[0]!.calls[0]!.observation).toBe('api:bob answered: eu')
  })

  it('expired: the observation says nobody answered', async () => {
    const { out, deps } = await waiting()
    const expired = expireApprovals(out.state, item(out.state).expiresAt)
    const done = await runSlice(expired, deps, UNLIMITED)
    expect(toRunResult(done.state).steps[0]!.calls[0]!).toMatchObject({
      kind: 'denied',
      observation: expect.stringContaining('nobody answered before the question expired'),
    })
  })
})

describe('an approval saved before pending items had kinds', () => {
  it('reads as an approval item and is decided as before', async () => {
    const state = loadSaved(v4TextRows as Rows)
    const pending = pendingApprovals(state)[0]!.call.approval!
    expect(pending).toMatchObject({
      kind: 'approval',
      ask: null,
      answer: null,
      edit: null,
      editSchema: null,
    })
    const r = await approveSaved(state, textFinish('Recorded 42.'))
    expect(toRunResult(r.state)).toMatchObject({ ok: true, answer: 'Recorded 42.' })
  })
})

describe('a tool that forbids edits (editable: false)', () => {
  const transfer = defineTool({
    name: 'transfer',
    description: 'Move money.',
    params: z.object({ amount: z.number() }),
    returns: 'A receipt.',
    sideEffect: true,
    editable: false,
    handler: ({ amount }) => `moved ${amount}`,
  })

  it('its approval has no edit schema, and edited arguments are refused as not editable', async () => {
    const r = run([transfer], nativeCall('transfer', { amount: 10 }, 't1'))
    const out = await runSlice(r.state, r.deps, UNLIMITED)
    expect(item(out.state)).toMatchObject({ kind: 'approval', editSchema: null })
    expect(checkEditedArgs(transfer, {}, { amount: 5 })).toMatchObject({
      ok: false,
      code: 'not_editable',
    })
  })

  it('an editable tool: the edit checked strictly, each bad field named', () => {
    const editable = defineTool({ ...transfer, editable: true })
    const schema = { properties: { amount: {} } }
    expect(checkEditedArgs(editable, schema, { amount: 5 })).toEqual({
      ok: true,
      args: { amount: 5 },
    })
    expect(checkEditedArgs(editable, schema, { amount: 'five', memo: 'x' })).toMatchObject({
      ok: false,
      code: 'invalid_args',
      fields: ['amount', 'memo'],
    })
  })
})
