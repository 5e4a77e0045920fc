/**
 * A2A from the deployable bundle (docs/serving.md#a2a, docs/decisions.md#a2a-with-a2a-jssdk):
 * @a2a-js/sdk's server parts as wrangler bundles them, without nodejs_compat, in workerd, with
 * the platform running the alarms by itself; @a2a-js/sdk's client in Node over real HTTP.
 */
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk'
import { describe, expect, it } from 'vitest'
import { withRuntime } from './bundled-runtime'
import { bundleWorker } from './worker-runtime'
import { a2aClient, a2aMessage } from './a2a-client'

const TOKEN = 'a2a-bundle-token'

const message = (text: string) => a2aMessage(text)

describe('A2A in the deployable bundle', () => {
  it('the SDK client sends, streams to an approval, and reads the completed task', async () => {
    const worker = await bundleWorker()
    const posts: string[] = []
    await withRuntime(
      {
        worker,
        bindings: {
          API_TOKEN: TOKEN,
          MODEL: 'script',
          ENABLED_TOOLS: 'calculator,http_post',
          CONFIRM_POLICY: 'ask',
          HTTP_ALLOWLIST: 'receiver.test',
          CPU_MS: '30000',
          LOG_LEVEL: 'silent',
        },
        outbound: async (req) => {
          if (new URL(req.url).host !== 'receiver.test')
            return new Response('no such host', { status: 502 })
          posts.push(await req.text())
          return Response.json({ ok: true })
        },
      },
      async (rt) => {
        const base = String(await rt.url()).replace(/\/$/, '')
        const client = await a2aClient(base, TOKEN)
        expect((await client.getAgentCard()).supportedInterfaces[0]!.url).toBe(`${base}/a2a`)

        // Blocking: the answer arrives on the same request, the alarms running by themselves.
        const done = (await client.sendMessage(
          message('call calculator with {"expression": "6 * 7"}, then finish with 42.'),
        )) as Task
        expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
        expect(done.artifacts[0]!.parts[0]!.content).toEqual({ $case: 'text', value: '42.' })

        // Streaming: working, then input-required at the approval; the stream ends there.
        const post = 'call http_post with {"url": "https://receiver.test/x", "body": {"a": 1}}'
        const events: StreamResponse[] = []
        for await (const e of client.sendMessageStream(
          message(`${post}, then finish with Posted.`),
        )) {
          events.push(e)
        }
        const last = events.at(-1)!.payload!
        expect(last.$case === 'statusUpdate' && last.value.status?.state).toBe(
          TaskState.TASK_STATE_INPUT_REQUIRED,
        )
        const id = (events[0]!.payload!.value as Task).id
        expect(posts).toEqual([])

        const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }
        const view = (await (await rt.fetch(`/v1/runs/${id}`, { headers: auth })).json()) as {
          pendingApprovals: { callId: string; argsHash: string }[]
        }
        const item = view.pendingApprovals[0]!
        const decided = await rt.fetch(`/v1/runs/${id}/approvals/${item.callId}`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ decision: 'approve', args_hash: item.argsHash }),
        })
        expect(decided.status).toBe(200)
        let task = await client.getTask({ tenant: '', id, historyLength: 0 })
        for (let i = 0; i < 200 && task.status?.state !== TaskState.TASK_STATE_COMPLETED; i++) {
          await new Promise((r) => setTimeout(r, 50))
          task = await client.getTask({ tenant: '', id, historyLength: 0 })
        }
        expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
        expect(task.history).toEqual([])
        expect(posts).toHaveLength(1)
      },
    )
  })

  it('a v0.3 message/send as curl sends it: metadata, a data part, a task waiting for a person', async () => {
    const worker = await bundleWorker()
    await withRuntime(
      {
        worker,
        bindings: {
          API_TOKEN: TOKEN,
          MODEL: 'script',
          ENABLED_TOOLS: 'http_post',
          CONFIRM_POLICY: 'ask',
          HTTP_ALLOWLIST: 'receiver.test',
          CPU_MS: '30000',
          LOG_LEVEL: 'silent',
        },
        outbound: async () => Response.json({ ok: true }),
      },
      async (rt) => {
        // The v0.3 translation reads data parts (the input's, and the status message's
        // `{pending}` of a task waiting for a person) with Node's `Buffer`.
        const post = 'call http_post with {"url": "https://receiver.test/x", "body": {}}'
        const res = await rt.fetch('/a2a', {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'message/send',
            params: {
              message: {
                kind: 'message',
                messageId: crypto.randomUUID(),
                role: 'user',
                parts: [
                  { kind: 'text', text: `${post}, then finish with Posted.` },
                  { kind: 'data', data: { ticket: 'T-1' } },
                ],
                metadata: { skill: 'default' },
              },
            },
          }),
        })
        expect(res.status).toBe(200)
        const body = (await res.json()) as { error?: unknown; result?: any }
        expect(body.error).toBeUndefined()
        expect(body.result).toMatchObject({ kind: 'task', status: { state: 'input-required' } })
        const parts = body.result.status.message.parts as { kind: string; data?: any }[]
        expect(parts.find((p) => p.kind === 'data')?.data.pending[0]).toMatchObject({
          kind: 'approval',
          tool: 'http_post',
        })
      },
    )
  })
})
