import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import { defineTool, react, type ModelResponse } from '../../src/kernel/index'
import { ScriptedModel, textAction, textFinish } from '../fakes/scripted-model'

// maxConsecutiveErrors counts failed steps of every kind in one streak.
const lookup = defineTool({
  name: 'lookup',
  description: 'Look a word up.',
  params: z.object({ q: z.string() }),
  returns: 'The entry, or a [ToolError] line when the word is unknown.',
  // The seed's convention for a failure reported as a result.
  handler: ({ q }) =>
    q.startsWith('missing') ? `[ToolError] no entry for ${q}` : `entry for ${q}`,
})

type Turn = 'format' | 'tool' | 'ok' | 'repeat'
let k = 0
/** `format`: no action; `tool`: a [ToolError] result; `ok`: a new word; `repeat`: the last call again. */
function turns(kinds: Turn[]): ModelResponse[] {
  let last = textAction('lookup', { q: `w${k++}` })
  return kinds.map((kind) => {
    if (kind === 'format') return { text: 'I am not sure yet.', finishReason: 'stop' }
    if (kind === 'tool') return textAction('lookup', { q: `missing ${k++}` })
    if (kind === 'repeat') return last
    last = textAction('lookup', { q: `w${k++}` })
    return last
  })
}

async function run(kinds: Turn[], maxConsecutiveErrors = 3) {
  const model = new ScriptedModel([...turns(kinds), textFinish('done')])
  return react('t', [lookup], {
    model,
    protocol: 'text',
    budget: { maxConsecutiveErrors, maxSteps: 20, loopGuardWindow: 3 },
  })
}

describe('one streak of failed steps', () => {
  it.each<[string, Turn[], string]>([
    ['format, tool, format', ['format', 'tool', 'format'], 'unparsable_exhausted'],
    ['tool, format, tool', ['tool', 'format', 'tool'], 'tool_error_exhausted'],
    ['format, format, tool', ['format', 'format', 'tool'], 'tool_error_exhausted'],
    ['tool, tool, format', ['tool', 'tool', 'format'], 'unparsable_exhausted'],
    ['ok, loop guard, format, tool', ['ok', 'repeat', 'format', 'tool'], 'tool_error_exhausted'],
    ['format, loop guard, tool', ['ok', 'format', 'repeat', 'tool'], 'tool_error_exhausted'],
    ['tool, loop guard, format', ['ok', 'tool', 'repeat', 'format'], 'unparsable_exhausted'],
  ])('%s ends the run at the third failed step in a row', async (_name, kinds, stopReason) => {
    const result = await run(kinds)
    expect(result).toMatchObject({ ok: false, answer: '', stopReason })
    expect(result.steps).toHaveLength(kinds.length)
    expect(result.error).toMatch(/^3 failed steps in a row/)
  })

  it('a step with a working call resets it', async () => {
    const result = await run(['format', 'tool', 'ok', 'format', 'tool', 'ok', 'tool', 'format'])
    expect(result).toMatchObject({ ok: true, answer: 'done', stopReason: 'finish' })
  })

  it('counts a [ToolError] result as a failed call whose kind says so', async () => {
    const result = await run(['tool', 'tool'], 2)
    expect(result.stopReason).toBe('tool_error_exhausted')
    for (const step of result.steps) {
      expect(step.calls[0]).toMatchObject({ kind: 'tool_error' })
      expect(step.calls[0]!.observation).toMatch(/^\[ToolError\] no entry/)
    }
  })

  it('a loop-guarded step is a failed step', async () => {
    const result = await run(['ok', 'repeat', 'repeat'], 2)
    expect(result.stopReason).toBe('tool_error_exhausted')
    expect(result.steps.map((s) => s.calls[0]?.kind)).toEqual(['ok', 'loop_guard', 'loop_guard'])
  })
})
