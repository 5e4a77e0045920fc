import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  drainAlarms,
  getRun,
  getTrace,
  postJson,
  RECEIVER,
  receiverPost,
  startRun,
  useServiceFakes,
} from '../service/harness'

/**
 * Edit, then approve, through the Worker's fetch (docs/human-in-the-loop.md#edit-then-approve):
 * the approver's arguments are checked strictly against the tool's schema, hashed again,
 * recorded beside the model's, and the edited call is the one that runs, once.
 */
const fakes = useServiceFakes()

async function awaiting() {
  fakes.ai.enqueue(
    reply.toolCalls([receiverPost('/deploys', { service: 'order' })], { content: 'Record it.' }),
  )
  const id = await startRun({ task: 'Record the deploy', tools: ['http_post'] })
  await drainAlarms(id)
  const pending = (await getRun(id)).pendingApprovals[0]!
  return { id, pending }
}

const approve = (id: string, body: Record<string, unknown>) =>
  postJson(`/v1/runs/${id}/approvals/call_post`, { decision: 'approve', ...body })

const EDITED = { url: `https://${RECEIVER}/deploys`, body: { service: 'billing' } }

describe('edit, then approve', () => {
  it('the pending approval offers edit with the tool JSON Schema', async () => {
    const { pending } = await awaiting()
    expect(pending).toMatchObject({
      kind: 'approval',
      actions: ['approve', 'deny', 'edit'],
      editSchema: { type: 'object', required: ['url', 'body'] },
    })
  })

  it('the edited call runs once; the original, the edit and who are recorded; the model is told', async () => {
    const { id, pending } = await awaiting()
    fakes.ai.enqueue(reply.text('Recorded billing.'))
    const res = await approve(id, { args_hash: pending.argsHash, args: EDITED })
    expect(res.status).toBe(200)
    const decided = (await res.json()) as { args: unknown; argsHash: string }
    expect(decided).toMatchObject({
      ok: true,
      decision: 'approved',
      decidedBy: 'api',
      args: EDITED,
    })
    expect(decided.argsHash).toMatch(/^[0-9a-f]{64}$/)
    expect(decided.argsHash).not.toBe(pending.argsHash)

    await drainAlarms(id)
    expect(fakes.receiver.hits.filter((h) => h.path === '/deploys')).toHaveLength(1)
    expect(JSON.parse(fakes.receiver.hits[0]!.body)).toEqual({ service: 'billing' })

    const call = (await getTrace(id)).steps[0]!.calls[0]!
    expect(call.args).toEqual(EDITED)
    expect(call.approval).toMatchObject({
      decision: 'approved',
      argsHash: decided.argsHash,
      edit: {
        originalArgs: { url: `https://${RECEIVER}/deploys`, body: { service: 'order' } },
        originalHash: pending.argsHash,
        by: 'api',
      },
    })
    const told = JSON.stringify(fakes.ai.lastBody())
    expect(told).toContain('[Edited] api changed the arguments before approving')
    expect(told).toContain('{\\"service\\":\\"order\\"}')

    // Sent again after a lost answer: the decision recorded, nothing runs again.
    const again = await approve(id, { args_hash: pending.argsHash, args: EDITED })
    expect(again.status).toBe(200)
    expect(await again.json()).toMatchObject({ replayed: true, args: EDITED })
    await drainAlarms(id)
    expect(fakes.receiver.hits.filter((h) => h.path === '/deploys')).toHaveLength(1)
  })

  it.each([
    ['a value of the wrong type', { url: EDITED.url, body: 'billing' }, ['body']],
    ['a missing argument', { body: { service: 'billing' } }, ['url']],
    ['an argument the tool does not take', { ...EDITED, headers: { x: '1' } }, ['headers']],
  ])(
    '%s: 400 invalid_args naming the field, still pending, nothing run',
    async (_l, args, fields) => {
      const { id, pending } = await awaiting()
      const res = await approve(id, { args_hash: pending.argsHash, args })
      expect(res.status).toBe(400)
      const body = (await res.json()) as {
        error: { code: string; message: string; details: { fields: string[] } }
      }
      expect(body.error.code).toBe('invalid_args')
      expect(body.error.details.fields).toEqual(fields)
      expect(body.error.message).toContain(fields[0])
      const view = await getRun(id)
      expect(view.pendingApprovals).toEqual([pending])
      await drainAlarms(id)
      expect(fakes.receiver.hits).toHaveLength(0)
    },
  )

  it('a stale args_hash with edited arguments: 409 hash_mismatch, nothing run', async () => {
    const { id } = await awaiting()
    const res = await approve(id, { args_hash: 'a'.repeat(64), args: EDITED })
    expect(res.status).toBe(409)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('hash_mismatch')
    expect((await getRun(id)).pendingApprovals).toHaveLength(1)
  })

  it('arguments with a denial: 400, nothing decided', async () => {
    const { id, pending } = await awaiting()
    const res = await postJson(`/v1/runs/${id}/approvals/call_post`, {
      decision: 'deny',
      args_hash: pending.argsHash,
      args: EDITED,
    })
    expect(res.status).toBe(400)
    expect((await getRun(id)).pendingApprovals).toHaveLength(1)
  })
})
