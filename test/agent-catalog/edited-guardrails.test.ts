/**
 * Tool-input guardrails on arguments a person edited (docs/guardrails.md#where-they-run), through
 * the Worker's fetch with the test catalog's `guarded` agent: the model's arguments pass at review
 * and are approved with edits; the edited ones are screened before the call runs, and a tripwire
 * ends the run as one at review does, nothing run.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  drainAlarms,
  getRun,
  getTrace,
  postJson,
  RECEIVER,
  startRun,
  useServiceFakes,
} from '../service/harness'

const fakes = useServiceFakes()

const ARGS = { url: `https://${RECEIVER}/incidents/1`, body: { status: 'ok' } }

async function awaiting() {
  fakes.ai.enqueue(reply.toolCalls([{ id: 'call_1', name: 'http_post', arguments: ARGS }]))
  const id = await startRun({ task: 'Record the incident', agent: 'guarded' })
  await drainAlarms(id)
  const pending = (await getRun(id)).pendingApprovals[0]!
  expect(pending.args).toEqual(ARGS)
  return { id, pending }
}

const approveWith = (id: string, hash: string, args: Record<string, unknown>) =>
  postJson(`/v1/runs/${id}/approvals/call_1`, { decision: 'approve', args_hash: hash, args })

describe('edited arguments meet the tool-input guardrails', () => {
  it('an edit the guardrail blocks: the run ends by the guardrail, the call never runs', async () => {
    const { id, pending } = await awaiting()
    const edited = { url: `https://${RECEIVER}/admin/users`, body: { status: 'ok' } }
    expect((await approveWith(id, pending.argsHash, edited)).status).toBe(200)
    await drainAlarms(id)
    expect(fakes.receiver.hits).toEqual([])
    const trace = await getTrace(id)
    expect(trace).toMatchObject({
      ok: false,
      stopReason: 'guardrail',
      guardrail: { name: 'no_admin', point: 'toolInput', tool: 'http_post', callId: 'call_1' },
    })
    expect(trace.steps[0]!.calls[0]).toMatchObject({
      status: 'done',
      args: edited,
      observation:
        '[Guardrail] http_post was blocked by guardrail "no_admin": admin URLs are off limits',
      approval: { decision: 'approved', edit: { originalArgs: ARGS, by: 'api' } },
    })
    // The model was asked once: nothing after the tripwire.
    expect(fakes.ai.bodies).toHaveLength(1)
  })

  it('an edit the guardrails pass runs once, screened after the decision', async () => {
    const { id, pending } = await awaiting()
    const edited = { url: `https://${RECEIVER}/incidents/2`, body: { status: 'ok' } }
    fakes.ai.enqueue(reply.text('Recorded.'))
    await approveWith(id, pending.argsHash, edited)
    await drainAlarms(id)
    expect(fakes.receiver.hits.map((h) => h.path)).toEqual(['/incidents/2'])
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, answer: 'Recorded.' })
    const screened = trace.guardrails!.filter((g) => g.guardrail === 'no_admin')
    // Once at review (the model's arguments), once after the edit.
    expect(screened).toMatchObject([
      { verdict: 'pass', callId: 'call_1' },
      { verdict: 'pass', callId: 'call_1' },
    ])
  })
})
