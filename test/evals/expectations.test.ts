import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import type { Expectations } from '../../agents/define-eval'
import type { RunResult } from '../../src/kernel/trace'
import {
  checkExpectations,
  EvalFileError,
  parseEvalFile,
  partialMatch,
} from '../../src/evals/index'

function run(over: Partial<RunResult> = {}): RunResult {
  const call = (name: string, args: Record<string, unknown>) => ({
    id: `c_${name}`,
    name,
    args,
    observation: 'x',
    originalSize: 1,
    truncated: false,
    ms: 1,
    status: 'done' as const,
    kind: 'ok' as const,
  })
  return {
    id: 'run_1',
    ok: true,
    answer: 'Root cause: the pool max went from 50 to 10.',
    output: { severity: 'sev2', component: 'checkout', tags: ['db', 'pool'] },
    stopReason: 'finish',
    phase: 'done',
    protocol: 'native',
    agent: { name: 'a', version: 'v' },
    conversation: { id: 'run_1', position: 1, previousRunId: null } as never,
    steps: [
      {
        i: 0,
        kind: 'action',
        thought: '',
        calls: [
          call('query_metrics', { service: 'order', window: 60 }),
          call('search_logs', { service: 'order' }),
        ],
        promptTokens: 100,
        completionTokens: 10,
        estimated: false,
        elidedTokens: 0,
        toolSpecTokens: 0,
        lostModelCalls: 0,
        ms: 1,
        modelMs: 1,
        finishReason: 'tool_calls',
      },
      {
        i: 1,
        kind: 'action',
        thought: '',
        calls: [call('rollback_deploy', { service: 'order', to_version: 'v2' })],
        promptTokens: 200,
        completionTokens: 20,
        estimated: false,
        elidedTokens: 0,
        toolSpecTokens: 0,
        lostModelCalls: 0,
        ms: 1,
        modelMs: 1,
        finishReason: 'tool_calls',
      },
      {
        i: 2,
        kind: 'finish',
        thought: '',
        calls: [],
        promptTokens: 300,
        completionTokens: 30,
        estimated: false,
        elidedTokens: 0,
        toolSpecTokens: 0,
        lostModelCalls: 0,
        ms: 1,
        modelMs: 1,
        finishReason: 'stop',
      },
    ],
    usage: {
      promptTokens: 600,
      completionTokens: 60,
      estimated: false,
      cachedPromptTokens: 0,
      modelCalls: 3,
      lostModelCalls: 0,
      lostPromptTokens: 0,
      activeMs: 3,
      costUsd: 0.002,
    },
    ...over,
  }
}

describe('checking a run against its expectations', () => {
  it('passes when every expectation holds', () => {
    const all: Expectations = {
      ok: true,
      stopReason: 'finish',
      output: { severity: 'sev2', component: 'checkout', tags: ['db', 'pool'] },
      outputMatches: { severity: 'sev2', tags: ['db', 'pool'] },
      outputSchema: z.object({
        severity: z.enum(['sev1', 'sev2']),
        component: z.string(),
        tags: z.array(z.string()),
      }),
      toolsCalled: ['search_logs', { name: 'query_metrics', args: { service: 'order' } }],
      toolOrder: ['query_metrics', { name: 'rollback_deploy', args: { to_version: 'v2' } }],
      toolsNotCalled: ['http_post'],
      answerContains: ['50 to 10'],
      answerMatches: ['^Root cause', /pool max/],
      maxSteps: 3,
      maxTokens: 660,
      maxCostUsd: 0.002,
    }
    expect(checkExpectations(all, run())).toEqual([])
  })

  it.each<[string, Expectations, RegExp]>([
    ['ok', { ok: true }, /expected ok: true, the run ended max_steps/],
    ['stopReason', { ok: false, stopReason: 'finish' }, /expected finish, got max_steps/],
  ])('%s on a failed run', (expectation, e, message) => {
    const failures = checkExpectations(e, run({ ok: false, answer: '', stopReason: 'max_steps' }))
    expect(failures).toEqual([{ expectation, message: expect.stringMatching(message) }])
  })

  it.each<[string, Expectations, RegExp]>([
    ['output', { output: { severity: 'sev1' } }, /expected \{"severity":"sev1"\}/],
    ['outputMatches', { outputMatches: { tags: ['db'] } }, /expected to contain/],
    [
      'outputSchema',
      { outputSchema: { type: 'object', properties: { severity: { enum: ['sev1'] } } } },
      /severity/,
    ],
    [
      'toolsCalled[0]',
      { toolsCalled: [{ name: 'query_metrics', args: { service: 'payments' } }] },
      /no call of query_metrics with \{"service":"payments"\}; calls made: query_metrics, search_logs, rollback_deploy/,
    ],
    [
      'toolOrder[1]',
      { toolOrder: ['rollback_deploy', 'search_logs'] },
      /no call of search_logs after the earlier ones/,
    ],
    [
      'toolsNotCalled',
      { toolsNotCalled: ['rollback_deploy'] },
      /rollback_deploy was called 1 time$/,
    ],
    ['answerContains[0]', { answerContains: ['rolled back'] }, /does not contain "rolled back"/],
    ['answerMatches[0]', { answerMatches: ['^Action'] }, /does not match \/\^Action\//],
    ['maxSteps', { maxSteps: 2 }, /3 steps, at most 2/],
    ['maxTokens', { maxTokens: 659 }, /660 tokens, at most 659/],
    ['maxCostUsd', { maxCostUsd: 0.001 }, /\$0\.002000, at most \$0\.001/],
  ])('names the failed expectation %s and what the run did', (expectation, e, message) => {
    expect(checkExpectations(e, run())).toEqual([
      { expectation, message: expect.stringMatching(message) },
    ])
  })

  it('a cost limit on a deployment without prices fails and says what to set', () => {
    const noCost = run()
    delete noCost.usage.costUsd
    expect(checkExpectations({ maxCostUsd: 1 }, noCost)[0]!.message).toContain(
      'PRICE_PROMPT_PER_1K_USD',
    )
  })

  it('partial matches: objects by subset, arrays item by item', () => {
    expect(partialMatch({ a: 1, b: { c: 2, d: 3 } }, { b: { c: 2 } })).toBe(true)
    expect(partialMatch({ a: [1, 2] }, { a: [1] })).toBe(false)
    expect(partialMatch({ a: [{ x: 1, y: 2 }] }, { a: [{ x: 1 }] })).toBe(true)
    expect(partialMatch({ a: null }, { a: {} })).toBe(false)
    expect(partialMatch('x', 'x')).toBe(true)
  })
})

describe('an eval file', () => {
  const good = { agent: 'triage', cases: [{ name: 'one', task: 't', expect: { ok: true } }] }

  it('a good one loads, keeping its file name', () => {
    expect(parseEvalFile('agents/triage.eval.ts', good)).toMatchObject({
      file: 'agents/triage.eval.ts',
      agent: 'triage',
    })
  })

  it.each<[string, unknown, string]>([
    [
      'a missing task',
      { agent: 'a', cases: [{ name: 'x', expect: {} }] },
      'cases.0.task: missing (expected string)',
    ],
    [
      'a misspelt expectation',
      { agent: 'a', cases: [{ name: 'x', task: 't', expect: { answerContain: ['y'] } }] },
      'cases.0.expect: unknown argument answerContain',
    ],
    [
      'a bad tool expectation',
      { agent: 'a', cases: [{ name: 'x', task: 't', expect: { toolsCalled: [{ args: {} }] } }] },
      'cases.0.expect.toolsCalled.0',
    ],
    [
      'an approval that is neither',
      {
        agent: 'a',
        cases: [{ name: 'x', task: 't', approvals: { rollback_deploy: 'yes' }, expect: {} }],
      },
      'cases.0.approvals.rollback_deploy: must be one of "approve", "deny"',
    ],
    [
      'a relative fake URL',
      { agent: 'a', cases: [{ name: 'x', task: 't', fakes: [{ url: '/status' }], expect: {} }] },
      'cases.0.fakes.0.url: must be an absolute http(s) URL',
    ],
    ['no cases', { agent: 'a', cases: [] }, 'cases: must be >= 1 items'],
    [
      'a name used twice',
      {
        agent: 'a',
        cases: [
          { name: 'x', task: 't', expect: {} },
          { name: 'x', task: 'u', expect: {} },
        ],
      },
      'cases.1.name: "x" is used twice',
    ],
  ])('%s: names the file and the field', (_label, value, field) => {
    let error: unknown
    try {
      parseEvalFile('agents/a.eval.ts', value)
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(EvalFileError)
    expect((error as Error).message).toMatch(/^agents\/a\.eval\.ts: not a valid eval file/)
    expect((error as Error).message).toContain(field)
  })
})
