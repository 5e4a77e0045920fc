/**
 * A tool's own `check(args, ctx)`: a cheap, side-effect-free look at the validated arguments
 * after the schema and before the confirm policy. A call failing it gets its [ToolError] at once
 * (in the review, before anyone is asked); dispatch, the security boundary, checks it too.
 */
import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  createRunState,
  defineTool,
  dispatch,
  MemoryObservationStore,
  react,
  runSlice,
  ToolRegistry,
  type CheckContext,
  type ConfirmHook,
} from '../../src/kernel/index'
import { nativeAnswer, nativeCall, nativeCalls, ScriptedModel } from '../fakes/scripted-model'
import { UNLIMITED } from './harness'

const ALLOWED = new Set(['api.allowed.test'])
const seen: { args: unknown; ctx: CheckContext }[] = []
const posted: string[] = []

const post = defineTool({
  name: 'post',
  description: 'POST to a URL on the allowlist.',
  params: z.object({ url: z.string() }),
  returns: 'The status.',
  sideEffect: true,
  check: (args, ctx) => {
    seen.push({ args, ctx })
    const host = new URL(args.url).host
    return ALLOWED.has(host) ? undefined : `host ${host} is not on the allowlist`
  },
  handler: ({ url }) => {
    posted.push(url)
    return 'HTTP 200'
  },
})

const fragile = defineTool({
  name: 'fragile',
  description: 'A read-only tool whose check throws.',
  params: z.object({}),
  returns: 'Nothing.',
  check: () => {
    throw new Error('check exploded')
  },
  handler: () => 'ran',
})

function reset() {
  seen.length = 0
  posted.length = 0
}

describe('a tool check', () => {
  it('fails a call at once with [ToolError]; the approver is never asked and nothing runs', async () => {
    reset()
    const asked: string[] = []
    const hook: ConfirmHook = (call) => {
      asked.push(call.id)
      return true
    }
    const model = new ScriptedModel([
      nativeCalls([nativeCall('post', { url: 'https://evil.test/x' }, 'c_bad')]),
      nativeCalls([nativeCall('post', { url: 'https://api.allowed.test/x' }, 'c_ok')]),
      nativeAnswer('done'),
    ])
    const result = await react('post it', [post], { model, confirm: hook })
    expect(result.ok).toBe(true)
    expect(result.steps[0]!.calls[0]).toMatchObject({
      id: 'c_bad',
      kind: 'tool_error',
      status: 'done',
      observation:
        '[ToolError] post: host evil.test is not on the allowlist The call was not executed.',
    })
    expect(result.steps[0]!.calls[0]).not.toHaveProperty('approval')
    // Only the call that passed its check was put to the approver, and only it ran.
    expect(asked).toEqual(['c_ok'])
    expect(posted).toEqual(['https://api.allowed.test/x'])
    // Checked in review, and again by dispatch (the security boundary) for the call that ran.
    expect(seen.map((s) => s.ctx.callId)).toEqual(['c_bad', 'c_ok', 'c_ok'])
    expect(seen[0]!.args).toEqual({ url: 'https://evil.test/x' })
    // The model saw the check's words as the call's result.
    const tool = model.requests[1]!.messages.find((m) => m.role === 'tool')
    expect(tool).toMatchObject({ tool_call_id: 'c_bad', content: expect.stringMatching(/evil/) })
  })

  it('under "ask" with no hook, a failing call asks nobody: the run does not wait', async () => {
    reset()
    const model = new ScriptedModel([
      nativeCalls([nativeCall('post', { url: 'https://evil.test/x' }, 'c_bad')]),
      nativeAnswer('gave up'),
    ])
    const state = createRunState({ task: 'post', tools: ['post'], policy: { mode: 'ask' } })
    const deps = {
      model,
      registry: new ToolRegistry([post]),
      observations: new MemoryObservationStore(),
    }
    const out = await runSlice(state, deps, UNLIMITED)
    expect(out.end).toBe('done')
    expect(out.state.steps[0]!.calls[0]).toMatchObject({ kind: 'tool_error', approval: null })
    expect(posted).toEqual([])
  })

  it('a check that throws is a [ToolError] naming the tool, not a crash', async () => {
    const model = new ScriptedModel([
      nativeCalls([nativeCall('fragile', {}, 'c1')]),
      nativeAnswer('done'),
    ])
    const result = await react('t', [fragile], { model })
    expect(result.steps[0]!.calls[0]!.observation).toBe(
      '[ToolError] fragile: its check failed (Error: check exploded)',
    )
  })

  it('runs after the schema: arguments the schema refuses never reach the check', async () => {
    reset()
    const out = await dispatch(
      { id: 'c1', name: 'post', args: { url: 42 } },
      {
        registry: new ToolRegistry([post]),
        runId: 'r1',
        observations: new MemoryObservationStore(),
        policy: { mode: 'allow' },
      },
    )
    expect(out.observation).toMatch(/^\[ToolError\] invalid arguments for post:/)
    expect(seen).toEqual([])
  })

  it('dispatch on its own enforces it too (the security boundary)', async () => {
    reset()
    const ctx = {
      registry: new ToolRegistry([post]),
      runId: 'r1',
      observations: new MemoryObservationStore(),
      policy: { mode: 'allow' as const },
    }
    const bad = await dispatch({ id: 'c1', name: 'post', args: { url: 'https://evil.test/' } }, ctx)
    expect(bad).toMatchObject({
      kind: 'tool_error',
      observation:
        '[ToolError] post: host evil.test is not on the allowlist The call was not executed.',
    })
    const ok = await dispatch(
      { id: 'c2', name: 'post', args: { url: 'https://api.allowed.test/' } },
      ctx,
    )
    expect(ok).toMatchObject({ kind: 'ok', observation: 'HTTP 200' })
    expect(posted).toEqual(['https://api.allowed.test/'])
    expect(seen[0]!.ctx).toEqual({ runId: 'r1', callId: 'c1' })
  })

  it('must be a function when given', () => {
    expect(() =>
      defineTool({
        name: 'x',
        description: 'x',
        params: z.object({}),
        returns: 'x',
        check: 'no' as never,
        handler: () => 'x',
      }),
    ).toThrow('defineTool(x): check must be a function when given')
  })
})
