/**
 * Guardrails in Slack (docs/guardrails.md#the-trace): a run started by a slash command for the
 * test catalog's `guarded` agent shows, in its progress message, the guardrail that stopped it,
 * and the guardrails that rewrote what it saw.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { SlackWorld } from '../slack-e2e/harness'

let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

/** Drives the run's alarms until no delivery is pending. */
async function deliverAll(runId: string, maxAlarms = 40) {
  for (let i = 0; i < maxAlarms; i++) {
    const view = await world.view(runId)
    if (!view.deliveries.some((d) => d.status === 'pending')) return view
    await world.nextAlarm(runId)
  }
  throw new Error(`run ${runId} still has pending deliveries after ${maxAlarms} alarms`)
}

describe('the progress message of a guarded run', () => {
  it('names the guardrail that stopped the run, where and why', async () => {
    const { runId } = await world.command('guarded: DROP TABLE users')
    await world.settle(runId)
    await deliverAll(runId)
    expect(world.model.bodies).toHaveLength(0)
    expect(world.messages()[0]!.text).toMatch(
      /^:x: Failed .*\nstopped by guardrail no_drop at input after 0 steps: the task asks to drop a table/,
    )
  })

  it('names the guardrails that rewrote what the run saw', async () => {
    world.model.enqueue(reply.text('Mailed [email].'))
    const { runId } = await world.command('guarded: mail jane.doe@example.com the report')
    await world.settle(runId)
    await deliverAll(runId)
    expect(JSON.stringify(world.model.bodies[0]!.messages)).not.toContain('jane.doe@')
    const first = world.messages()[0]!.text!
    expect(first).toMatch(/^:white_check_mark: Done .*\ndone in 1 step · /)
    expect(first).toContain('guardrail rewrote: pii')
  })
})
