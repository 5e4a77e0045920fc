/**
 * Guardrails in the kernel (docs/guardrails.md), through its exports: verdicts are part of the
 * persisted state (a run read back after a crash keeps them and does not screen its task again),
 * a judge's tokens count against the run's budget, a check that hangs trips at its timeout, and a
 * tripwire on a read stops the side effect beside it. Runs saved before guardrails read back
 * with none.
 */
import { describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import v4TextRows from '../fixtures/run-state-v4/text-awaiting-approval.json'
import {
  advance,
  createRunState,
  judgedGuardrail,
  parseRunState,
  piiRedaction,
  react,
  runSlice,
  toRunResult,
  type Guardrail,
} from '../../src/kernel/index'
import { ScriptedModel, nativeAnswer, nativeCall, nativeCalls } from '../fakes/scripted-model'
import { deployTool, recordingTool, sliceDeps, UNLIMITED, type Ran } from './harness'
import { loadSaved, type Rows } from './saved-states'

const pass = { verdict: 'pass' } as const

describe('guardrail verdicts are persisted state', () => {
  it('a run saved before guardrails reads back with none', () => {
    expect(loadSaved(v4TextRows as Rows).guardrails).toEqual([])
  })

  it('a run read back after its task was screened keeps the verdict and screens it once', async () => {
    let checks = 0
    const screenTask: Guardrail = {
      name: 'redact_name',
      check: (task) => {
        checks++
        return { verdict: 'rewrite', value: String(task).replace('Alice', '[name]') }
      },
    }
    const model = new ScriptedModel([nativeAnswer('done')])
    const deps = { ...sliceDeps(model, [], () => 1_000), guardrails: { input: [screenTask] } }
    const state = createRunState({ id: 'run_g', task: 'Greet Alice', tools: [], now: 1_000 })
    // One transition (the screening), saved; then the process dies.
    const saved = JSON.parse(JSON.stringify(await advance(state, deps))) as unknown
    const parsed = parseRunState(saved)
    if (!parsed.ok) throw new Error(parsed.error)
    expect(parsed.state.task).toBe('Greet [name]')
    const out = await runSlice(parsed.state, deps, UNLIMITED)
    expect(checks).toBe(1)
    expect(JSON.stringify(model.requests[0]!.messages)).toContain('Greet [name]')
    expect(toRunResult(out.state)).toMatchObject({
      ok: true,
      guardrails: [{ guardrail: 'redact_name', point: 'input', verdict: 'rewrite' }],
    })
  })
})

describe('a model-judged check', () => {
  it('its tokens count against the run budget: the run stops before the agent is asked', async () => {
    const judge = new ScriptedModel([
      {
        text: '{"verdict":"pass"}',
        finishReason: 'stop',
        usage: { promptTokens: 900, completionTokens: 5 },
      },
    ])
    const agent = new ScriptedModel([nativeAnswer('never asked')])
    const result = await react('Summarise the report', [], {
      model: agent,
      budget: { maxPromptTokens: 500 },
      guardrails: {
        input: [judgedGuardrail({ name: 'policy', model: judge, instructions: 'Allow reports.' })],
      },
    })
    expect(result).toMatchObject({ ok: false, stopReason: 'token_budget' })
    expect(result.usage).toMatchObject({ promptTokens: 900, completionTokens: 5, modelCalls: 1 })
    expect(agent.requests).toHaveLength(0)
    expect(result.guardrails![0]).toMatchObject({ verdict: 'pass', promptTokens: 900 })
  })
})

describe('output guardrails on a structured answer', () => {
  it('see the validated output; a rewrite is the new output, its JSON the answer', async () => {
    const model = new ScriptedModel([
      nativeCalls([nativeCall('final_answer', { answer: { contact: 'ana@example.com', n: 2 } })]),
    ])
    const result = await react('Who to contact?', [], {
      model,
      output: z.object({ contact: z.string(), n: z.number() }),
      guardrails: { output: [piiRedaction()] },
    })
    expect(result).toMatchObject({ ok: true, output: { contact: '[email]', n: 2 } })
    expect(JSON.parse(result.answer)).toEqual({ contact: '[email]', n: 2 })
    expect(JSON.stringify(result.steps)).not.toContain('ana@example.com')
  })
})

describe('a check that fails', () => {
  it('a check that hangs trips at its timeout, naming it', async () => {
    const model = new ScriptedModel([nativeAnswer('never asked')])
    const result = await react('Anything', [], {
      model,
      guardrails: {
        input: [{ name: 'slow', timeoutMs: 20, check: () => new Promise<never>(() => {}) }],
      },
    })
    expect(result).toMatchObject({
      ok: false,
      stopReason: 'guardrail',
      guardrail: { name: 'slow', point: 'input' },
    })
    expect(result.guardrails![0]!.error).toBe('Error: guardrail "slow" timed out after 20ms')
    expect(model.requests).toHaveLength(0)
  })

  it('a run cancelled while a check waits ends cancelled, not by the check', async () => {
    const controller = new AbortController()
    const waiting: Guardrail = {
      name: 'waits',
      check: (_value, ctx) =>
        new Promise<never>((_, reject) => {
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')))
          controller.abort(new Error('stopped by the caller'))
        }),
    }
    const result = await react('Anything', [], {
      model: new ScriptedModel([nativeAnswer('never asked')]),
      signal: controller.signal,
      guardrails: { input: [waiting] },
    })
    expect(result).toMatchObject({
      ok: false,
      stopReason: 'cancelled',
      error: 'stopped by the caller',
    })
    expect(result.guardrails![0]).toMatchObject({ guardrail: 'waits', verdict: 'tripwire' })
  })

  it.each([
    [{ verdict: 'block' }, 'unknown verdict "block"'],
    [{ verdict: 'tripwire' }, 'a tripwire needs a non-empty "reason"'],
    [{ verdict: 'rewrite', value: 42 }, 'a rewrite at input must be a string'],
  ])('a check answering %j is an error: %s', async (answer, error) => {
    const result = await react('Anything', [], {
      model: new ScriptedModel([nativeAnswer('no')]),
      guardrails: { input: [{ name: 'odd', check: () => answer as never }] },
    })
    expect(result).toMatchObject({ ok: false, stopReason: 'guardrail' })
    expect(result.guardrails![0]!.error).toBe(error)
  })
})

describe('a tripwire on a tool output', () => {
  it('stops the side effect the same step asked for', async () => {
    const ran: Ran = []
    const lookup = recordingTool(ran, {
      name: 'lookup',
      description: 'Look a page up.',
      params: z.object({ page: z.string() }),
      returns: 'The page.',
      answer: () => 'SECRET PLANS',
    })
    const model = new ScriptedModel([
      nativeCalls([
        nativeCall('lookup', { page: 'plans' }),
        nativeCall('deploy', { service: 'api' }),
      ]),
    ])
    const noPlans: Guardrail = {
      name: 'no_plans',
      check: (text) =>
        String(text).includes('PLANS') ? { verdict: 'tripwire', reason: 'plans' } : pass,
    }
    const result = await react('Look and deploy', [lookup, deployTool(ran)], {
      model,
      confirm: { mode: 'allow' },
      guardrails: { toolOutput: [noPlans] },
    })
    expect(result).toMatchObject({
      ok: false,
      stopReason: 'guardrail',
      guardrail: { name: 'no_plans', point: 'toolOutput', tool: 'lookup' },
    })
    expect(ran.map((r) => r.name)).toEqual(['lookup'])
    expect(JSON.stringify(result.steps)).not.toContain('SECRET PLANS')
  })
})
