/** Conversations in the kernel: turns of a finished run, the history limit, the prompt's head. */
import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  continueConversation,
  createRunState,
  followUpSource,
  KernelUsageError,
  runSlice,
  splitConversationHandle,
  toRunResult,
  type RunState,
} from '../../src/kernel/index'
import { TURN_ARGS_CHARS, TURN_CALLS } from '../../src/kernel/conversation'
import {
  nativeAnswer,
  nativeCall,
  nativeCalls,
  ScriptedModel,
  textAction,
  textFinish,
} from '../fakes/scripted-model'
import { recordingTool, sliceDeps, UNLIMITED, type Ran } from './harness'

const now = 1_800_000_000_000

function echo(ran: Ran) {
  return recordingTool(ran, {
    name: 'echo',
    description: 'Echo the text.',
    params: z.object({ text: z.string() }),
    returns: 'The text.',
    answer: ({ text }) => `echo: ${text}`,
  })
}

/** Runs `task` to its end with these replies; `conversation` when it is a follow-up. */
async function finished(
  id: string,
  task: string,
  replies: ReturnType<typeof nativeAnswer>[],
  conversation?: RunState['conversation'],
) {
  const ran: Ran = []
  const model = new ScriptedModel((_request, turn) => replies[turn])
  const state = createRunState({
    id,
    task,
    tools: ['echo'],
    now,
    ...(conversation ? { conversation } : {}),
  })
  const out = await runSlice(
    state,
    sliceDeps(model, [echo(ran)], () => now),
    UNLIMITED,
  )
  return { state: out.state, model }
}

describe('continueConversation', () => {
  it('turns a finished run into one turn: task, calls with arguments and handles, answer', async () => {
    const { state } = await finished('run_a', 'Say hi', [
      nativeCalls([nativeCall('echo', { text: 'hi' }, 'c1')]),
      nativeAnswer('hi'),
    ])
    const c = continueConversation(followUpSource(state), 4000)
    expect(c).toMatchObject({ id: 'run_a', position: 1, earlierRuns: ['run_a'], droppedTurns: 0 })
    expect(c.turns).toHaveLength(1)
    expect(c.turns[0]).toMatchObject({
      runId: 'run_a',
      position: 0,
      ok: true,
      stopReason: 'finish',
    })
    expect(c.turns[0]!.text).toBe(
      [
        'Turn 1 (run run_a)',
        'Task: Say hi',
        'Tools called:',
        '- echo {"text":"hi"} → read_observation handle "run_a/obs_c1"',
        'Answer: hi',
      ].join('\n'),
    )
    expect(c.prompt).not.toContain('echo: hi')
    expect(c.tokens).toBe(Math.ceil(c.prompt.length / 4))
  })

  it('lists a short number of calls, cuts long arguments, and refuses a run not finished', async () => {
    const calls = Array.from({ length: TURN_CALLS + 3 }, (_, i) =>
      nativeCall('echo', { text: `${i}`.padEnd(TURN_ARGS_CHARS + 50, 'x') }, `c${i}`),
    )
    const { state } = await finished('run_b', 'Many', [nativeCalls(calls), nativeAnswer('done')])
    const text = continueConversation(followUpSource(state), 4000).turns[0]!.text
    expect(text.match(/^- echo /gm)).toHaveLength(TURN_CALLS)
    expect(text).toContain('- … and 3 more calls')
    expect(text).toMatch(/… \[\d+ more characters\]/)
    const fresh = createRunState({ id: 'run_c', task: 'x', tools: [], now })
    expect(() => followUpSource(fresh)).toThrow(KernelUsageError)
  })

  it('keeps the newest turns that fit; the oldest go first and stay dropped', async () => {
    let conversation: RunState['conversation'] = null
    let state!: RunState
    for (const n of [1, 2, 3]) {
      const out = await finished(
        `run_${n}`,
        `Question ${n} ${'x'.repeat(800)}`,
        [nativeAnswer(`Answer ${n}`)],
        conversation ?? undefined,
      )
      state = out.state
      conversation = continueConversation(followUpSource(state), 500)
    }
    // Each turn is ~210 tokens: two fit in 500 with the header and the stub.
    expect(conversation!.turns.map((t) => t.runId)).toEqual(['run_2', 'run_3'])
    expect(conversation!.droppedTurns).toBe(1)
    expect(conversation!.prompt).toContain('[1 earlier turn left out to fit the history limit]')
    expect(conversation!.tokens).toBeLessThanOrEqual(500)
    expect(conversation!.earlierRuns).toEqual(['run_1', 'run_2', 'run_3'])
    expect(conversation!.position).toBe(3)
    // A larger limit later does not bring back a dropped turn.
    const again = await finished('run_4', 'Q4', [nativeAnswer('A4')], conversation!)
    const wide = continueConversation(followUpSource(again.state), 100_000)
    expect(wide.droppedTurns).toBe(1)
    expect(wide.turns.map((t) => t.runId)).toEqual(['run_2', 'run_3', 'run_4'])
  })
})

describe('a follow-up run', () => {
  it('sends the history after the system prompt and before the task, the same bytes every step', async () => {
    const first = await finished('run_a', 'Say hi', [nativeAnswer('hi')])
    const conversation = continueConversation(followUpSource(first.state), 4000)
    const { state, model } = await finished(
      'run_b',
      'Say it again',
      [nativeCalls([nativeCall('echo', { text: 'again' }, 'c2')]), nativeAnswer('again')],
      conversation,
    )
    expect(toRunResult(state)).toMatchObject({
      ok: true,
      conversation: { id: 'run_a', position: 1, previousRunId: 'run_a', historyTurns: 1 },
    })
    const [a, b] = model.requests
    expect(a!.messages.slice(1, 3)).toEqual([
      { role: 'user', content: conversation.prompt },
      { role: 'user', content: 'Task: Say it again' },
    ])
    expect(JSON.stringify(b!.messages.slice(0, 3))).toBe(JSON.stringify(a!.messages.slice(0, 3)))
    // The history is counted in the request's estimate (the scripted model reports no usage).
    expect(state.steps[0]!.estimated).toBe(true)
    expect(state.steps[0]!.promptTokens).toBeGreaterThan(conversation.tokens)
  })
})

describe('a follow-up in the text protocol', () => {
  it('sends the same history message between the system prompt and the task', async () => {
    const first = await finished('run_a', 'Say hi', [nativeAnswer('hi')])
    const conversation = continueConversation(followUpSource(first.state), 4000)
    const replies = [textAction('echo', { text: 'x' }), textFinish('x')]
    const model = new ScriptedModel((_request, turn) => replies[turn])
    const state = createRunState({
      id: 'run_t',
      task: 'Echo x',
      tools: ['echo'],
      protocol: 'text',
      now,
      conversation,
    })
    const out = await runSlice(
      state,
      sliceDeps(model, [echo([])], () => now),
      UNLIMITED,
    )
    expect(toRunResult(out.state)).toMatchObject({ ok: true, answer: 'x', protocol: 'text' })
    for (const request of model.requests) {
      expect(request.messages[0]!.role).toBe('system')
      expect(request.messages.slice(1, 3)).toEqual([
        { role: 'user', content: conversation.prompt },
        { role: 'user', content: 'Task: Echo x' },
      ])
    }
    expect(model.requests).toHaveLength(2)
  })
})

describe('conversation handles', () => {
  it('name a run and its run-local handle', () => {
    expect(splitConversationHandle('run_a/obs_c1')).toEqual({ runId: 'run_a', handle: 'obs_c1' })
    expect(splitConversationHandle('obs_c1')).toBeNull()
    expect(splitConversationHandle('/obs_c1')).toBeNull()
    expect(splitConversationHandle('run_a/')).toBeNull()
  })
})
