/**
 * A deploy never changes the bytes a run in flight sends. Runs saved by state version 3 started
 * before tool output was framed: resumed now, they keep that version's wording (prompt format 1:
 * `Observation:` in the text protocol, bare tool messages natively, no tool-output rule), and runs
 * saved by version 4 before the format was snapshotted keep the frame. Each fixture's
 * `*.request.json` is the request that version's kernel sent when the saved run was approved and
 * resumed, recorded by running that kernel (commit 058fdc3 for version 3, 2e41101 for version 4).
 */
import { describe, expect, it } from 'vitest'
import v3NativeRows from '../fixtures/run-state-v3/awaiting-approval.json'
import v3NativeRequest from '../fixtures/run-state-v3/awaiting-approval.request.json'
import v3TextRows from '../fixtures/run-state-v3/text-awaiting-approval.json'
import v3TextRequest from '../fixtures/run-state-v3/text-awaiting-approval.request.json'
import v4TextRows from '../fixtures/run-state-v4/text-awaiting-approval.json'
import v4TextRequest from '../fixtures/run-state-v4/text-awaiting-approval.request.json'
import { createRunState, parseRunState, toRunResult, type RunState } from '../../src/kernel/index'
import { nativeAnswer, textFinish } from '../fakes/scripted-model'
import { approveSaved, loadSaved as load, type Rows } from './saved-states'

/** Approves the saved run's call and resumes it; returns the request the model got. */
async function approveAndResume(state: RunState, reply: ReturnType<typeof nativeAnswer>) {
  const r = await approveSaved(state, reply)
  expect(toRunResult(r.state)).toMatchObject({ ok: true, answer: 'Recorded 42.' })
  expect(r.ran.map((c) => c.name)).toEqual(['http_post'])
  return { request: r.model.requests[0]!, state: r.state }
}

describe('the prompt format of a run in flight', () => {
  it('a text-protocol run saved by version 3 sends its Observation: wording, byte for byte', async () => {
    const state = load(v3TextRows as Rows)
    expect(state.agent.promptFormat).toBe(1)
    const { request, state: after } = await approveAndResume(state, textFinish('Recorded 42.'))
    expect(JSON.stringify(request.messages)).toBe(JSON.stringify(v3TextRequest))
    expect(request.messages[3]).toEqual({ role: 'user', content: 'Observation:\n6 * 7 = 42' })
    expect(request.messages[0]!.content).not.toContain('<tool_output>')
    // The format stays the run's after it is saved again and read back.
    const reread = parseRunState(JSON.parse(JSON.stringify(after)))
    expect(reread.ok && reread.state.agent.promptFormat).toBe(1)
  })

  it('a native run saved by version 3 sends bare tool messages, byte for byte', async () => {
    const state = load(v3NativeRows as Rows)
    const { request } = await approveAndResume(state, nativeAnswer('Recorded 42.'))
    expect(JSON.stringify(request.messages)).toBe(JSON.stringify(v3NativeRequest))
    expect(request.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      '6 * 7 = 42',
      'HTTP 200',
    ])
  })

  it('a run saved by version 4 before the format was snapshotted keeps the frame', async () => {
    const state = load(v4TextRows as Rows)
    expect(state.agent.promptFormat).toBeUndefined()
    const { request } = await approveAndResume(state, textFinish('Recorded 42.'))
    expect(JSON.stringify(request.messages)).toBe(JSON.stringify(v4TextRequest))
    expect(request.messages[3]!.content).toBe(
      '<tool_output tool="calculator">\n6 * 7 = 42\n</tool_output>',
    )
  })

  it('a new run snapshots the current format; the agent version does not hash it', () => {
    const saved = load(v3NativeRows as Rows)
    const fresh = createRunState({
      task: saved.task,
      tools: saved.tools,
      protocol: saved.protocolSetting,
      policy: { mode: 'ask' },
    })
    expect(fresh.agent.promptFormat).toBe(2)
    // The version says what a run took from its agent; the wording is the kernel's.
    expect(saved.agent.version).toBe(fresh.agent.version)
  })
})
