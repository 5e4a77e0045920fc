import { describe, expect, it } from 'vitest'
import { react } from '../../src/kernel/index'
import { DEMO_MODEL_NAME, DEMO_ROLLBACK_CALL_ID, demoModel } from '../../src/llm/demo-script'
import { demoTools } from '../../tools/demo'

const TASK = 'Order service 5xx jumped from 0.1% to 12%. Find the root cause and mitigate.'

describe('the on-call demo: demo tools driven by the recorded model', () => {
  it('approved rollback: ok, the answer names v2.13.2 and the rollback that ran', async () => {
    const asked: { name: string; args: Record<string, unknown> }[] = []
    const result = await react(TASK, [...demoTools], {
      model: demoModel(),
      confirm: (call) => {
        asked.push({ name: call.name, args: call.args })
        return true
      },
    })

    expect(result).toMatchObject({ ok: true, stopReason: 'finish', model: DEMO_MODEL_NAME })
    expect(result.answer).toContain('v2.13.2')
    expect(result.answer).toContain('rolled the order service back')
    expect(asked).toEqual([
      {
        name: 'rollback_deploy',
        args: expect.objectContaining({ service: 'order', to_version: 'v2.13.2' }),
      },
    ])
    const rollback = result.steps
      .flatMap((s) => s.calls)
      .find((c) => c.id === DEMO_ROLLBACK_CALL_ID)
    expect(rollback).toMatchObject({ kind: 'ok', status: 'done' })
    expect(rollback!.observation).toMatch(/^rolled back order from v2\.14\.0 to v2\.13\.2/)
    // Every investigative call succeeded on the fixture data: no tool errors along the way.
    expect(result.steps.flatMap((s) => s.calls).map((c) => c.kind)).toEqual(Array(6).fill('ok'))
  })

  it('denied rollback: still a finished run, and the answer says it was not performed', async () => {
    const result = await react(TASK, [...demoTools], { model: demoModel(), confirm: () => false })

    expect(result.ok).toBe(true)
    expect(result.answer).toContain('v2.14.0')
    expect(result.answer).toMatch(/rollback of order to v2\.13\.2 was NOT performed/)
    const rollback = result.steps
      .flatMap((s) => s.calls)
      .find((c) => c.id === DEMO_ROLLBACK_CALL_ID)
    expect(rollback).toMatchObject({ kind: 'denied', status: 'done' })
    expect(rollback!.observation).toMatch(
      /^\[ToolError\] rollback_deploy was not run: it was denied/,
    )
  })
})
