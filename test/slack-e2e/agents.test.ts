/**
 * Slack and the shipped agents: `/edgeloop <agent>: <task>` picks one, and a structured answer is
 * posted compact. test/agent-catalog/ covers channels, approvals and the rest with test agents.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { SlackWorld } from './harness'

let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

const ANSWER = { severity: 'sev1', component: 'api', summary: 'The public API answers 503.' }

describe('agents in Slack', () => {
  it('/edgeloop triage: <task> runs the triage agent and posts its answer compact', async () => {
    world.model.enqueue(reply.toolCalls([{ name: 'final_answer', arguments: { answer: ANSWER } }]))
    const { runId } = await world.command('triage: The public API answers 503 since 10:02')
    await world.settle(runId)
    const view = await world.view(runId)
    expect(view).toMatchObject({
      status: 'succeeded',
      task: 'The public API answers 503 since 10:02',
    })
    expect(view.agent.name).toBe('triage')
    expect(world.model.bodies[0]!.messages[0]!.content).toMatch(/^You triage incoming/)
    const texts = world.messages().map((m) => m.text ?? '')
    expect(texts.at(-1)).toBe(
      '*severity:* sev1\n*component:* api\n*summary:* The public API answers 503.\n' +
        '_Done in 1 step._',
    )
  })

  it('a prefix that names no agent is part of the task, for the default agent', async () => {
    world.model.enqueue(reply.text('Noted.'))
    const { runId } = await world.command('note: the disk is full')
    await world.settle(runId)
    expect(await world.view(runId)).toMatchObject({
      task: 'note: the disk is full',
      agent: { name: 'default' },
    })
  })
})
