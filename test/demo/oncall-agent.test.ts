/**
 * The offline demo as the `oncall` agent (MODEL=demo, as `npm start` runs it): the recorded
 * investigation with only its incident tools and its instructions; a run that names no agent
 * still runs the same demo under the default agent.
 */
import { describe, expect, it } from 'vitest'
import oncallMarkdown from '../../agents/oncall.md?raw'
import { oncall } from '../../agents/index'
import { createRunState, runSlice } from '../../src/kernel/index'
import { nativeAnswer, ScriptedModel } from '../fakes/scripted-model'
import { sliceDeps, UNLIMITED } from '../kernel/harness'
import {
  api,
  AUTH,
  drainAlarms,
  getRun,
  getTrace,
  startRun,
  useServiceFakes,
} from '../service/harness'

/** Runs a run's alarms and its children's until none is due (a parent waits for its child). */
async function drainFamily(id: string): Promise<void> {
  for (let round = 0; round < 10; round++) {
    let ran = await drainAlarms(id)
    for (const child of (await getRun(id)).children) ran += await drainAlarms(child.runId)
    if (ran === 0) return
  }
}

const TASK = 'The order service 5xx rate jumped from 0.1% to 12%. Find the root cause and fix it.'

useServiceFakes({ openai: false, receiver: false })

describe('the oncall agent', () => {
  it('is offered under MODEL=demo with its incident tools, the demo model and its instructions', async () => {
    const res = await api('/v1/agents/oncall', { headers: AUTH })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({
      name: 'oncall',
      tools: ['query_metrics', 'read_repo_file', 'rollback_deploy'],
      delegates: ['log_analyst'],
      model: 'demo',
      protocol: 'native',
      outputSchema: null,
      instructions: expect.stringMatching(/^You are the on-call engineer/),
    })
  })

  it('its instructions are agents/oncall.md, bundled by the Text rule, byte for byte', async () => {
    // What the Worker imported (wrangler.toml's rule) is the file as Vite reads it raw.
    expect(oncall.instructions).toBe(oncallMarkdown)
    const res = await api('/v1/agents/oncall', { headers: AUTH })
    const { instructions } = (await res.json()) as { instructions: string }
    // Stored trimmed: the file's last newline is not part of the text.
    expect(instructions).toBe(oncallMarkdown.trimEnd())
    expect(instructions.split('\n')).toHaveLength(6)
    // First in the system prompt, then the kernel's rules.
    const model = new ScriptedModel(() => nativeAnswer('done'))
    const state = createRunState({ task: 't', tools: [], agent: { name: 'oncall', instructions } })
    await runSlice(
      state,
      sliceDeps(model, [], () => 1),
      UNLIMITED,
    )
    const system = model.requests[0]!.messages[0]!.content as string
    expect(system.startsWith(`${oncallMarkdown.trimEnd()}\n\nYou are an agent that`)).toBe(true)
  })

  it.each([
    ['named (the README demo)', { agent: 'oncall' }, 'oncall'],
    ['no agent (the default agent, as before agents)', {}, 'default'],
  ])('%s: investigates and waits for the rollback approval', async (_label, ask, name) => {
    const id = await startRun({ task: TASK, ...ask })
    await drainFamily(id)
    const view = await getRun(id)
    expect(view).toMatchObject({ status: 'awaiting_approval', stepCount: 4, agent: { name } })
    expect(view.pendingApprovals[0]).toMatchObject({
      callId: 'call_demo_6',
      tool: 'rollback_deploy',
    })
    expect((await getTrace(id)).model).toBe('demo/scripted-incident')
  })

  it('hands the log reading to the log_analyst agent: a child run with its own trace', async () => {
    const id = await startRun({ task: TASK, agent: 'oncall' })
    await drainFamily(id)
    const view = await getRun(id)
    expect(view.children).toEqual([
      {
        callId: 'call_demo_3',
        runId: expect.any(String),
        agent: 'log_analyst',
        status: 'succeeded',
      },
    ])
    const child = await getRun(view.children[0]!.runId)
    expect(child).toMatchObject({ parentRunId: id, agent: { name: 'log_analyst' }, stepCount: 2 })
    expect(child.result.steps[0]!.calls.map((c) => c.name)).toEqual(['search_logs'])
    const delegated = view.result.steps[1]!.calls[0]!
    expect(delegated).toMatchObject({ name: 'ask_log_analyst', kind: 'ok' })
    expect(delegated.observation).toContain('in use 10/10, max 10')
    // The child's tokens are the parent's too.
    const own = view.result.steps.reduce((n, s) => n + s.promptTokens, 0)
    expect(view.result.usage.promptTokens).toBe(own + child.result.usage.promptTokens)
  })

  it('narrows, never widens: a tool outside its set is a 400', async () => {
    const res = await api('/v1/runs', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ task: TASK, agent: 'oncall', tools: ['calculator'] }),
    })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: { code: 'tools_not_allowed' } })
  })
})
