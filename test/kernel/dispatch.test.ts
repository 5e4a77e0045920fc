import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  defineTool,
  dispatch,
  MemoryObservationStore,
  ToolRegistry,
  type ConfirmHook,
  type ConfirmPolicy,
  type DispatchContext,
  type ToolCallRequest,
} from '../../src/kernel/index'
import { deployTool, recordingTool, type Ran } from './harness'

const runs: Ran = []

const lookup = recordingTool(runs, {
  name: 'lookup',
  description: 'Look a word up.',
  params: z.strictObject({
    q: z.string(),
    limit: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(10))),
  }),
  returns: 'The entry.',
  answer: (args) => `entry for ${args.q}`,
})

const deploy = deployTool(runs)

const seen: { signal?: AbortSignal } = {}
const slow = defineTool({
  name: 'slow',
  description: 'Never finishes on its own.',
  params: z.object({}),
  returns: 'Nothing.',
  timeoutMs: 20,
  handler: (_args, ctx) => {
    seen.signal = ctx.signal
    return new Promise(() => {})
  },
})

const thrower = (name: string, value: () => unknown) =>
  defineTool({
    name,
    description: 'Fails.',
    params: z.object({}),
    returns: 'Nothing.',
    handler: () => {
      throw value()
    },
  })

const returner = (name: string, value: unknown) =>
  defineTool({
    name,
    description: 'Returns a value.',
    params: z.object({}),
    returns: 'A value.',
    handler: () => value,
  })

const registry = new ToolRegistry([
  lookup,
  deploy,
  slow,
  thrower('throws_error', () => new TypeError('bad input')),
  thrower('throws_string', () => 'plain words'),
  thrower('throws_object', () => ({ code: 42 })),
  returner('returns_object', { a: 1, b: [true, null] }),
  returner('returns_number', 42),
  returner('returns_nothing', undefined),
  returner('reports_failure', '[ToolError] upstream said 503; try again later'),
  returner('mentions_failure', 'the log shows [ToolError] lines from yesterday'),
])

function ctx(policy: ConfirmPolicy = { mode: 'allow' }, extra: Partial<DispatchContext> = {}) {
  return {
    registry,
    runId: 'run_1',
    observations: new MemoryObservationStore(),
    policy,
    ...extra,
  } satisfies DispatchContext
}

function call(name: string, args: Record<string, unknown> = {}, argsError?: string) {
  return { id: 'c1', name, args, ...(argsError ? { argsError } : {}) } satisfies ToolCallRequest
}

const SCHEMA_LOOKUP = JSON.stringify(registry.jsonSchema('lookup'))

describe('dispatch', () => {
  it.each([
    ['reports_failure', 'tool_error', '[ToolError] upstream said 503; try again later'],
    ['mentions_failure', 'ok', 'the log shows [ToolError] lines from yesterday'],
    ['returns_number', 'ok', '42'],
  ])('gives %s the kind its observation prefix says (%s)', async (name, kind, observation) => {
    const out = await dispatch(call(name), ctx())
    expect(out.kind).toBe(kind)
    expect(out.observation).toBe(observation)
  })

  it('names the available tools for an unknown tool', async () => {
    runs.length = 0
    const out = (await dispatch(call('lookpu', { q: 'x' }), ctx())).observation
    expect(out).toBe(
      `[ToolError] unknown tool "lookpu". Available tools: ${registry.names().join(', ')}`,
    )
    expect(runs).toEqual([])
  })

  it.each([
    ['missing', {}, 'q: missing (expected string)'],
    ['wrong type', { q: 5 }, 'q: expected string, got number'],
    ['out of range', { q: 'x', limit: 11 }, 'limit: must be <= 10'],
    ['not an integer', { q: 'x', limit: 1.5 }, 'limit: expected int, got number'],
    ['unknown key on a strict object', { q: 'x', colour: 'red' }, 'unknown argument colour'],
  ])('lists a validation problem (%s) with the schema', async (_label, args, problem) => {
    runs.length = 0
    const out = (await dispatch(call('lookup', args), ctx())).observation
    expect(out.startsWith('[ToolError] invalid arguments for lookup:\n- ')).toBe(true)
    expect(out).toContain(problem)
    expect(out).toContain(`Schema: ${SCHEMA_LOOKUP}`)
    expect(runs).toEqual([])
  })

  it('lists every problem of one call, one per line', async () => {
    const out = (await dispatch(call('lookup', { limit: 0, extra: 1 }), ctx())).observation
    const lines = out.split('\n').filter((l) => l.startsWith('- '))
    expect(lines).toHaveLength(3)
  })

  const hookYes: ConfirmHook = () => true
  const hookNo: ConfirmHook = () => false
  it.each<[string, ConfirmPolicy, Partial<DispatchContext>, string | RegExp, boolean]>([
    [
      'deny',
      { mode: 'deny' },
      {},
      '[ToolError] deploy has side effects and is not permitted here (confirm policy "deny"). Use read-only tools instead, or ask the user for permission.',
      false,
    ],
    [
      'dry_run',
      { mode: 'dry_run' },
      {},
      '[DryRun] deploy was not run (dry-run policy). It would have been called with {"service":"api"}.',
      false,
    ],
    [
      'ask without an approval',
      { mode: 'ask' },
      {},
      /^\[ToolError\] deploy has side effects and is not permitted here \(confirm policy "ask"\)\. Use read-only tools instead, or ask the user for permission\.$/,
      false,
    ],
    ['ask, approved by a person', { mode: 'ask' }, { approved: true }, 'deployed api', true],
    ['ask, hook says yes', { mode: 'ask' }, { confirm: hookYes }, 'deployed api', true],
    [
      'ask, hook says no',
      { mode: 'ask' },
      { confirm: hookNo },
      '[ToolError] deploy was denied by the approver. Use read-only tools instead, or ask the user for permission.',
      false,
    ],
    [
      'ask, hook throws',
      { mode: 'ask' },
      {
        confirm: () => {
          throw new Error('hook down')
        },
      },
      '[ToolError] deploy: the approval hook failed (Error: hook down); not run.',
      false,
    ],
    [
      'allowlist naming the tool',
      { mode: 'allowlist', tools: ['deploy'] },
      {},
      'deployed api',
      true,
    ],
    [
      'allowlist not naming the tool',
      { mode: 'allowlist', tools: ['other'] },
      {},
      /^\[ToolError\] deploy has side effects and is not permitted here \(confirm policy "allowlist"\)/,
      false,
    ],
    ['allow', { mode: 'allow' }, {}, 'deployed api', true],
  ])('side effect under %s', async (_label, policy, extra, expected, ran) => {
    runs.length = 0
    const result = await dispatch(call('deploy', { service: 'api' }), ctx(policy, extra))
    if (typeof expected === 'string') expect(result.observation).toBe(expected)
    else expect(result.observation).toMatch(expected)
    expect(runs.length).toBe(ran ? 1 : 0)
    expect(result.kind).toBe(ran ? 'ok' : policy.mode === 'dry_run' ? 'dry_run' : 'tool_error')
  })

  it('read-only tools run under the strictest policy', async () => {
    expect((await dispatch(call('lookup', { q: 'x' }), ctx({ mode: 'deny' }))).observation).toBe(
      'entry for x',
    )
  })

  it('times a tool out with its own timeoutMs and aborts its signal', async () => {
    const started = Date.now()
    const result = await dispatch(call('slow'), ctx())
    expect(result.observation).toBe('[ToolError] slow timed out after 20ms')
    expect(result.kind).toBe('tool_error')
    expect(seen.signal?.aborted).toBe(true)
    expect(Date.now() - started).toBeLessThan(1000)
  })

  it('aborts the tool signal when the run is cancelled, and runs nothing once cancelled', async () => {
    const run = new AbortController()
    run.abort(new Error('stop'))
    runs.length = 0
    const out = (await dispatch(call('lookup', { q: 'x' }), ctx(undefined, { signal: run.signal })))
      .observation
    expect(out).toBe('[ToolError] lookup was not run: the run was cancelled')
    expect(runs).toEqual([])
  })

  it.each([
    ['throws_error', '[ToolError] throws_error failed: TypeError: bad input'],
    ['throws_string', '[ToolError] throws_string failed: Error: plain words'],
    ['throws_object', '[ToolError] throws_object failed: object: {"code":42}'],
  ])('turns what %s throws into an observation', async (name, expected) => {
    const result = await dispatch(call(name), ctx())
    expect(result).toMatchObject({ observation: expected, kind: 'tool_error' })
  })

  it.each([
    ['returns_object', '{"a":1,"b":[true,null]}'],
    ['returns_number', '42'],
    ['returns_nothing', '(no output)'],
  ])('serializes what %s returns', async (name, expected) => {
    expect((await dispatch(call(name), ctx())).observation).toBe(expected)
  })

  it('reports argsError for a read-only tool with its schema', async () => {
    runs.length = 0
    const out = (await dispatch(call('lookup', {}, 'arguments are not valid JSON: oops'), ctx()))
      .observation
    expect(out).toBe(
      `[ToolError] lookup: arguments are not valid JSON: oops Send the arguments as one JSON object matching: ${SCHEMA_LOOKUP}`,
    )
    expect(runs).toEqual([])
  })

  it('never runs a side-effecting tool whose arguments could not be read', async () => {
    runs.length = 0
    const out = (
      await dispatch(
        call('deploy', { service: 'api' }, 'arguments are not valid JSON: oops'),
        ctx({ mode: 'allow' }, { approved: true }),
      )
    ).observation
    expect(out).toMatch(
      /^\[ToolError\] deploy: arguments are not valid JSON: oops The call was not executed\./,
    )
    expect(runs).toEqual([])
  })

  it('passes the call id to the handler (the idempotency key)', async () => {
    runs.length = 0
    await dispatch({ id: 'call_77', name: 'deploy', args: { service: 'a' } }, ctx())
    expect(runs).toEqual([{ name: 'deploy', args: { service: 'a' }, callId: 'call_77' }])
  })

  it('records timing from the injected clock', async () => {
    let t = 0
    const result = await dispatch(
      call('lookup', { q: 'x' }),
      ctx(undefined, { now: () => (t += 7) }),
    )
    expect(result.ms).toBe(7)
  })
})
