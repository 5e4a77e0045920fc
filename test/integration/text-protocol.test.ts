import { describe, expect, it } from 'vitest'
import { decideApproval, pendingApprovals, toRunResult } from '../../src/kernel/index'
import { calculator } from '../../tools/calculator'
import { createHttpPostTool } from '../../tools/http-post'
import { reply } from '../fakes/fake-openai'
import { created, framed, useWire, RECEIVER_HOST, runUntilStill, startRun } from './harness'

const wire = useWire({ [RECEIVER_HOST]: created })

const httpPost = createHttpPostTool({ allowlist: [RECEIVER_HOST] })
const action = (json: string) => reply.text(`Thinking.\n\`\`\`json\n${json}\n\`\`\``)

describe('text protocol through the real OpenAI client', () => {
  it('sends no tools; replays the reply and the observation as plain messages', async () => {
    const first = action('{"thought":"add","action":"calculator","args":{"expression":"2 + 3"}}')
    wire.api.enqueue(first, action('{"thought":"ok","action":"finish","args":{"answer":"5"}}'))
    const { state, deps } = startRun([calculator], wire.model(), {
      protocol: 'text',
      task: 'Add 2 and 3.',
    })

    const out = await runUntilStill(state, deps)

    expect(toRunResult(out.state)).toMatchObject({ ok: true, answer: '5', protocol: 'text' })
    expect(wire.api.violations).toEqual([])
    for (const body of wire.api.bodies) {
      expect(body).not.toHaveProperty('tools')
      expect(body).not.toHaveProperty('tool_choice')
      expect(body.temperature).toBe(0)
    }
    expect(wire.api.lastBody().messages).toEqual([
      { role: 'system', content: expect.stringContaining('### calculator') },
      { role: 'user', content: 'Task: Add 2 and 3.' },
      {
        role: 'assistant',
        content:
          'Thinking.\n```json\n{"thought":"add","action":"calculator","args":{"expression":"2 + 3"}}\n```',
      },
      { role: 'user', content: framed('calculator', '2 + 3 = 5') },
    ])
  })

  it('an exact side-effect action waits for approval, then posts once with the run and call id', async () => {
    wire.api.enqueue(
      action(
        `{"thought":"notify","action":"http_post","args":{"url":"https://${RECEIVER_HOST}/n","body":{"x":1}}}`,
      ),
      action('{"thought":"done","action":"finish","args":{"answer":"sent"}}'),
    )
    const { state, deps } = startRun([httpPost], wire.model(), {
      protocol: 'text',
      policy: { mode: 'ask' },
    })
    const paused = await runUntilStill(state, deps)
    const [pending] = pendingApprovals(paused.state)
    expect(pending?.call.id).toBe('s0c0')
    const decided = decideApproval(paused.state, {
      callId: 's0c0',
      decision: 'approve',
      argsHash: pending!.call.approval!.hash,
      by: 'U1',
      now: Date.now(),
    })
    if (!decided.ok) throw new Error(decided.message)

    const out = await runUntilStill(decided.state, deps)

    expect(toRunResult(out.state)).toMatchObject({ ok: true, answer: 'sent' })
    const posts = wire.outbound.to(RECEIVER_HOST)
    expect(posts).toHaveLength(1)
    expect(posts[0]!.headers['idempotency-key']).toBe('run_int:s0c0')
  })

  it('a side-effect action that needed JSON repairs is never executed nor sent for approval', async () => {
    wire.api.enqueue(
      action(
        `{"thought":"notify","action":"http_post","args":{"url":"https://${RECEIVER_HOST}/n","body":{"x":1},},}`,
      ),
      action('{"thought":"done","action":"finish","args":{"answer":"not sent"}}'),
    )
    const { state, deps } = startRun([httpPost], wire.model(), {
      protocol: 'text',
      policy: { mode: 'ask' },
    })

    const out = await runUntilStill(state, deps)

    expect(out.end).toBe('done')
    expect(wire.outbound.to(RECEIVER_HOST)).toEqual([])
    expect(out.state.steps[0]!.calls[0]!.approval).toBeNull()
    const observation = wire.api.lastBody().messages.at(-1)!.content as string
    expect(observation).toMatch(
      /^<tool_output tool="http_post">\n\[ToolError\] http_post: the action was not valid JSON/,
    )
    expect(observation).toContain('The call was not executed.')
  })
})
