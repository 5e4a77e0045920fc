/**
 * Structured answers through the Worker, the real `openai` client talking to the fake provider,
 * in both protocols: an answer that fails the schema is a [FormatError] naming each failing path,
 * counted in the one failed-step streak and ending `output_invalid`; a valid one is `output` in
 * the view, the trace, the run_finished event and the callback body, and `answer` renders it.
 */
import { describe, expect, it } from 'vitest'
import type { RunEvent } from '../../src/runs/events/events'
import { reply, type FakeReply } from '../fakes/fake-openai'
import { readSse } from '../events/sse'
import {
  api,
  AUTH,
  drainAlarms,
  getRun,
  getTrace,
  RECEIVER,
  startRun,
  useServiceFakes,
} from '../service/harness'

const fakes = useServiceFakes()

const GOOD = {
  severity: 'sev2',
  component: 'checkout',
  summary: 'Card payments fail for EU users.',
}
const BAD = { severity: 'urgent', component: 'checkout' }
const TASK = 'Customers in the EU report that card payments fail at checkout.'

/** The finish in each protocol: the native finish tool, or the text protocol's JSON action. */
const finish: Record<'native' | 'text', (answer: unknown) => FakeReply> = {
  native: (answer) => reply.toolCalls([{ name: 'final_answer', arguments: { answer } }]),
  text: (answer) =>
    reply.text(
      '```json\n' +
        JSON.stringify({ thought: 'Triaged.', action: 'finish', args: { answer } }) +
        '\n```',
    ),
}

describe.each(['native', 'text'] as const)('structured answers, %s protocol', (protocol) => {
  const start = (extra: Record<string, unknown> = {}) =>
    startRun({ task: TASK, agent: 'triage', protocol, ...extra })

  it('a wrong answer, then a right one: [FormatError] naming each path, then output', async () => {
    fakes.ai.enqueue(finish[protocol](BAD), finish[protocol](GOOD))
    const id = await start({ callback_url: `https://${RECEIVER}/hook` })
    await drainAlarms(id)
    const [, second] = fakes.ai.bodies
    const problem = second!.messages.at(-1)!.content as string
    expect(problem).toMatch(/^\[FormatError\] your final answer does not match the output schema: /)
    expect(problem).toContain('answer.severity: value does not match any of')
    expect(problem).toContain('answer: value does not have required property "summary"')
    if (protocol === 'native') {
      expect(second!.tools!.map((t) => t.function.name)).toContain('final_answer')
      expect(
        second!.tools!.find((t) => t.function.name === 'final_answer')!.function.parameters,
      ).toMatchObject({
        properties: { answer: { required: ['severity', 'component', 'summary'] } },
      })
    } else {
      expect(second!.messages[0]!.content).toContain('## Output schema')
    }
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, stopReason: 'finish', output: GOOD })
    expect(JSON.parse(trace.answer)).toEqual(GOOD)
    expect(trace.steps.map((s) => s.kind)).toEqual(['format_error', 'finish'])
    expect((await getRun(id)).result).toMatchObject({ output: GOOD })
    const body = JSON.parse(fakes.receiver.hits[0]!.body) as { output: unknown; agent: unknown }
    expect(body.output).toEqual(GOOD)
    expect(body.agent).toEqual({ name: 'triage', version: expect.stringMatching(/^[0-9a-f]{12}$/) })
    const events = await readSse(await api(`/v1/runs/${id}/events`, { headers: AUTH })).toEnd()
    const finished = events.find((e: RunEvent) => e.type === 'run_finished')!
    expect(finished.data).toMatchObject({ ok: true, output: GOOD, agent: body.agent })
  })

  it('always wrong: the streak ends the run output_invalid, with no output', async () => {
    fakes.ai.enqueue(
      finish[protocol](BAD),
      finish[protocol]({ ...GOOD, severity: 1 }),
      finish[protocol](BAD),
    )
    const id = await start()
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: false, answer: '', stopReason: 'output_invalid' })
    expect(trace).not.toHaveProperty('output')
    expect(trace.error).toMatch(
      /3 failed steps in a row; last: an answer that failed the output schema/,
    )
    expect(fakes.ai.bodies[2]!.messages.at(-1)!.content).toContain(
      'answer.severity: value type "number" is invalid. Expected "string"; answer.severity: value does not match any of ["sev1","sev2","sev3"]',
    )
  })

  it('plain text when an object is required: a [FormatError] saying so, then output_invalid', async () => {
    fakes.ai.enqueue(
      reply.text('It is a sev2 in checkout.'),
      reply.text('Severity sev2.'),
      reply.text('sev2'),
    )
    const id = await start()
    await drainAlarms(id)
    expect(fakes.ai.bodies[1]!.messages.at(-1)!.content).toMatch(
      protocol === 'native'
        ? /^\[FormatError\] your final answer was plain text, but this run needs a JSON value matching its output schema\./
        : /^\[FormatError\] no action could be read from your reply; a plain-text answer is not enough/,
    )
    expect(await getTrace(id)).toMatchObject({ ok: false, stopReason: 'output_invalid' })
  })
})

describe('an ad-hoc output schema', () => {
  it('a webhook caller asks for an object without a deploy; JSON answered as text counts', async () => {
    const output_schema = {
      type: 'object',
      properties: { total: { type: 'number' } },
      required: ['total'],
    }
    fakes.ai.enqueue(
      reply.toolCalls([{ name: 'calculator', arguments: { expression: '6 * 7' } }]),
      reply.text('{"total": 42}'),
    )
    const id = await startRun({ task: 'Compute 6 * 7', tools: ['calculator'], output_schema })
    await drainAlarms(id)
    expect(await getTrace(id)).toMatchObject({ ok: true, output: { total: 42 } })
  })
})
