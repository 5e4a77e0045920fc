import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  createRunState,
  defineTool,
  react,
  runSlice,
  toRunResult,
  type AgentPolicy,
  type CodePolicy,
  type ConfirmMode,
} from '../../src/kernel/index'
import {
  fakeClock,
  nativeAnswer,
  nativeCall,
  nativeCalls,
  ScriptedModel,
} from '../fakes/scripted-model'
import { sliceDeps, UNLIMITED, type Ran } from './harness'

/**
 * Policies as code through the kernel's exports (docs/human-in-the-loop.md#policies-as-code):
 * refunds under 50 run, above ask, to a foreign account are refused; never wider than the
 * confirm policy; a throwing policy asks; a shadow policy is recorded and never applied.
 */

type Refund = { amount: number; account: string }

const refundPolicy: CodePolicy<Refund> = ({ amount, account }) => {
  if (!account.startsWith('DE')) return { verdict: 'deny', reason: 'foreign account' }
  if (amount < 50) return { verdict: 'allow', reason: 'under 50' }
  return { verdict: 'ask', reason: '50 or more' }
}

function refundTool(
  ran: Ran,
  policies: { policy?: CodePolicy<Refund>; shadowPolicy?: CodePolicy<Refund> },
) {
  return defineTool({
    name: 'refund',
    description: 'Refund a customer.',
    params: z.object({ amount: z.number(), account: z.string() }),
    returns: 'A receipt.',
    sideEffect: true,
    ...policies,
    handler: (args, ctx) => {
      ran.push({ name: 'refund', args, callId: ctx.callId })
      return `refunded ${args.amount}`
    },
  })
}

async function refund(
  mode: ConfirmMode,
  args: Refund,
  policies: { policy?: CodePolicy<Refund>; shadowPolicy?: CodePolicy<Refund> } = {
    policy: refundPolicy,
  },
) {
  const clock = fakeClock()
  const ran: Ran = []
  const model = new ScriptedModel((_req, turn) =>
    turn === 0 ? nativeCalls([nativeCall('refund', args, 'r1')], 'Refund.') : nativeAnswer('ok'),
  )
  const deps = sliceDeps(model, [refundTool(ran, policies)], clock.now)
  const state = createRunState({
    id: 'run_r',
    task: 'refund',
    tools: ['refund'],
    policy: { mode },
    now: clock.now(),
  })
  const out = await runSlice(state, deps, UNLIMITED)
  const call = out.state.steps[0]!.calls[0]!
  return { out, ran, call, trace: toRunResult(out.state).steps[0]!.calls[0]! }
}

describe('a refund policy written as code', () => {
  it('under CONFIRM_POLICY allow: under 50 runs, its verdict and reason in the trace', async () => {
    const { ran, trace } = await refund('allow', { amount: 20, account: 'DE1' })
    expect(ran).toHaveLength(1)
    expect(trace.policy).toEqual({
      configured: 'run',
      applied: 'run',
      policy: { verdict: 'allow', reason: 'under 50', error: null },
      shadow: null,
      agent: null,
    })
  })

  it('under allow: 50 or more waits for a person', async () => {
    const { out, ran, call } = await refund('allow', { amount: 80, account: 'DE1' })
    expect(out.end).toBe('awaiting_approval')
    expect(ran).toHaveLength(0)
    expect(call.status).toBe('awaiting_approval')
    expect(call.policy).toMatchObject({ applied: 'ask', policy: { reason: '50 or more' } })
  })

  it('a foreign account is refused with the reason, nobody asked', async () => {
    const { ran, trace } = await refund('allow', { amount: 5, account: 'US9' })
    expect(ran).toHaveLength(0)
    expect(trace).toMatchObject({
      kind: 'denied',
      observation: expect.stringContaining('its policy denied it (foreign account)'),
      policy: { applied: 'deny' },
    })
  })

  it('never wider than the confirm policy: under ask, an allowed refund still asks', async () => {
    const { out, call } = await refund('ask', { amount: 20, account: 'DE1' })
    expect(out.end).toBe('awaiting_approval')
    expect(call.policy).toMatchObject({
      configured: 'ask',
      applied: 'ask',
      policy: { verdict: 'allow' },
    })
  })

  it('a policy that throws asks a person, and the error is recorded', async () => {
    const { out, call } = await refund(
      'allow',
      { amount: 20, account: 'DE1' },
      {
        policy: () => {
          throw new Error('rates unavailable')
        },
      },
    )
    expect(out.end).toBe('awaiting_approval')
    expect(call.policy!.policy).toEqual({
      verdict: 'ask',
      reason: null,
      error: 'the policy threw: Error: rates unavailable',
    })
  })

  it('shadow mode: the current policy decides, the candidate is recorded beside it', async () => {
    const { ran, trace } = await refund(
      'allow',
      { amount: 80, account: 'US9' },
      {
        shadowPolicy: refundPolicy,
      },
    )
    expect(ran).toHaveLength(1)
    expect(trace.policy).toEqual({
      configured: 'run',
      applied: 'run',
      policy: null,
      shadow: { verdict: 'deny', reason: 'foreign account', error: null },
      agent: null,
    })
  })
})

/**
 * An agent's policy (`react({ policy })`, an agent definition's `policy`): asked about every call
 * of the run, whatever the tool, composed with the tool's own: the stricter wins.
 */
describe("an agent's policy as code", () => {
  const lookup = defineTool({
    name: 'lookup',
    description: 'Look an account up.',
    params: z.object({ account: z.string() }),
    returns: 'The account.',
    handler: ({ account }) => `account ${account}`,
  })
  /** Business hours only for refunds; no lookups of internal accounts. */
  const agentPolicy: AgentPolicy = (call) => {
    const args = call.args as Record<string, unknown>
    if (call.name === 'lookup' && String(args.account).startsWith('INT'))
      return { verdict: 'deny', reason: 'internal accounts are off limits' }
    if (call.sideEffect) return { verdict: 'ask', reason: 'every change is reviewed' }
    return 'allow'
  }

  async function run(
    calls: { name: string; args: Record<string, unknown> }[],
    policy: AgentPolicy,
    mode: ConfirmMode = 'allow',
  ) {
    const ran: Ran = []
    const model = new ScriptedModel((_req, turn) =>
      turn === 0
        ? nativeCalls(
            calls.map((c, i) => nativeCall(c.name, c.args, `c${i}`)),
            'Go.',
          )
        : nativeAnswer('done'),
    )
    const result = await react('task', [refundTool(ran, { policy: refundPolicy }), lookup], {
      model,
      protocol: 'native',
      confirm: { mode },
      policy,
    })
    return { result, ran, calls: result.steps[0]!.calls }
  }

  it('the stricter wins: the tool allows a small refund, the agent asks', async () => {
    const { result, ran, calls } = await run(
      [{ name: 'refund', args: { amount: 20, account: 'DE1' } }],
      agentPolicy,
    )
    // In memory nobody can answer, so the call it asks about is denied (react's rule).
    expect(result.stopReason).toBe('finish')
    expect(ran).toHaveLength(0)
    expect(calls[0]!.approval).toMatchObject({ decision: 'denied' })
    expect(calls[0]!.policy).toEqual({
      configured: 'run',
      applied: 'ask',
      policy: { verdict: 'allow', reason: 'under 50', error: null },
      shadow: null,
      agent: { verdict: 'ask', reason: 'every change is reviewed', error: null },
    })
  })

  it('the stricter wins the other way: the agent allows, the tool denies a foreign account', async () => {
    const { ran, calls } = await run(
      [{ name: 'refund', args: { amount: 20, account: 'US1' } }],
      () => 'allow',
    )
    expect(ran).toHaveLength(0)
    expect(calls[0]!.observation).toContain('its policy denied it (foreign account)')
    expect(calls[0]!.policy).toMatchObject({ applied: 'deny', agent: { verdict: 'allow' } })
  })

  it('it decides about tools without a policy of their own, read-only ones too', async () => {
    const { result, calls } = await run(
      [
        { name: 'lookup', args: { account: 'INT-7' } },
        { name: 'lookup', args: { account: 'DE1' } },
      ],
      agentPolicy,
    )
    expect(result.ok).toBe(true)
    expect(calls[0]!.observation).toContain(
      "lookup was not run: the agent's policy denied it (internal accounts are off limits)",
    )
    expect(calls[1]!.observation).toContain('account DE1')
    expect(calls[1]!.policy).toMatchObject({ configured: 'run', applied: 'run' })
  })

  it('never wider than the confirm policy: under deny, its allow refuses', async () => {
    const { ran, calls } = await run(
      [{ name: 'refund', args: { amount: 20, account: 'DE1' } }],
      () => 'allow',
      'deny',
    )
    expect(ran).toHaveLength(0)
    expect(calls[0]!.policy).toMatchObject({ configured: 'deny', applied: 'deny' })
  })

  it('a policy that throws asks a person, and the error is recorded', async () => {
    const { result, calls } = await run([{ name: 'lookup', args: { account: 'DE1' } }], () => {
      throw new Error('rules service down')
    })
    expect(result.ok).toBe(true)
    expect(calls[0]!.approval).toMatchObject({ decision: 'denied' })
    expect(calls[0]!.policy!.agent).toMatchObject({
      verdict: 'ask',
      error: expect.stringContaining('rules service down'),
    })
  })
})
