/**
 * Storage writes per step stay flat however long the run (docs/architecture.md#budgets-and-edge-limits), and one structured log
 * line per transition carries ids and timings, never secrets or tool arguments.
 */
import { describe, expect, it, vi } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  API_TOKEN,
  decide,
  drainAlarms,
  getRun,
  logLines,
  OPENAI_KEY,
  RECEIVER,
  runAlarm,
  startRun,
  transitionLines,
  WEBHOOK_SECRET,
  useServiceFakes,
} from './harness'
import { saved, watchRun } from './run-watch'

const fakes = useServiceFakes()

describe('storage', () => {
  it('writes as many bytes for step 45 as for step 10', async () => {
    const steps = 48
    for (let i = 0; i < steps; i++) {
      fakes.ai.enqueue(
        reply.toolCalls([
          {
            id: `call_${1000 + i}`,
            name: 'calculator',
            arguments: { expression: `${1000 + i} * 2` },
          },
        ]),
      )
    }
    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({ task: 'Count', tools: ['calculator'], budget: { maxSteps: 50 } })
    const watch = await watchRun(id)
    // One step per alarm: the slice ends after each step's tool call, once its result is stored.
    watch.each(saved.ranCall(), () => fakes.clock.advance(10 * 60_000))
    const perStep: number[] = []
    let last = watch.bytesWritten()
    for (let i = 0; i < steps; i++) {
      expect(await runAlarm(id)).toBe(true)
      expect(await watch.steps()).toBe(i + 1)
      perStep.push(watch.bytesWritten() - last)
      last = watch.bytesWritten()
    }
    await drainAlarms(id)
    expect((await getRun(id)).result).toMatchObject({ ok: true, stopReason: 'finish' })
    // Same-shaped steps: equal within a few bytes (digits of counters), not growing with i.
    expect(Math.abs(perStep[45]! - perStep[10]!)).toBeLessThanOrEqual(16)
    expect(perStep[10]!).toBeLessThan(6_000)
    expect(perStep[10]!, 'the watch counted no writes').toBeGreaterThan(500)
    expect(Math.max(...perStep.slice(5)) - Math.min(...perStep.slice(5))).toBeLessThanOrEqual(32)
  })
})

describe('logs', () => {
  it('one line per transition with run id, step, phase and ms, and no secrets or arguments', async () => {
    const canary = 'arg-canary-7f3a9c'
    fakes.ai.enqueue(
      reply.toolCalls([
        {
          id: 'call_post',
          name: 'http_post',
          arguments: { url: `https://${RECEIVER}/x`, body: { token: canary } },
        },
      ]),
      reply.text('Posted.'),
    )
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    const warns = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const id = await startRun({ task: 'Post the token', tools: ['http_post'] })
    await drainAlarms(id)
    const { argsHash } = (await getRun(id)).pendingApprovals[0]!
    await decide(id, 'call_post', { decision: 'approve', args_hash: argsHash })
    await drainAlarms(id)
    expect((await getRun(id)).result.ok).toBe(true)

    const lines = transitionLines(fakes.logs)
    // Each model call's record is written first; think also classifies the calls and requests
    // the approval.
    expect(lines.map((l) => l.action)).toEqual([
      'model_call_started',
      'think',
      'start_call',
      'run_call',
      'model_call_started',
      'think',
    ])
    for (const line of lines) {
      expect(line).toMatchObject({ level: 'info', runId: id })
      expect(line.step).toBeTypeOf('number')
      expect(line.phase).toBeTypeOf('string')
      expect(line.ms).toBeTypeOf('number')
    }
    expect(lines[0]).toMatchObject({ step: 0, phase: 'think' })
    expect(lines[1]).toMatchObject({
      step: 0,
      phase: 'await_approval',
      tool: 'http_post',
      promptTokens: 10,
    })
    expect(lines[3]).toMatchObject({ step: 0, tool: 'http_post', callId: 'call_post' })
    expect(lines.at(-1)).toMatchObject({ step: 1, phase: 'done', stopReason: 'finish' })

    const everything = [...fakes.logs.mock.calls, ...errors.mock.calls, ...warns.mock.calls]
      .flat()
      .map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
      .join('\n')
    expect(logLines(fakes.logs).length).toBeGreaterThan(lines.length)
    for (const secret of [API_TOKEN, WEBHOOK_SECRET, OPENAI_KEY, canary]) {
      expect(everything).not.toContain(secret)
    }
  })

  it('a provider error that echoes the API key: the trace and the logs never show it', async () => {
    fakes.ai.enqueue(reply.error(401, `Incorrect API key provided: ${OPENAI_KEY}.`))
    const id = await startRun({ task: 'Anything', tools: ['calculator'] })
    await drainAlarms(id)
    const view = await getRun(id)
    expect(view.result).toMatchObject({ ok: false, stopReason: 'model_error' })
    expect(JSON.stringify(view)).not.toContain(OPENAI_KEY)
    const printed = fakes.logs.mock.calls.flat().map(String).join('\n')
    expect(printed).toContain(id)
    expect(printed).not.toContain(OPENAI_KEY)
  })
})
