import { describe, expect, it } from 'vitest'
import { ModelError } from '../../src/errors/model-error'
import type { ChatMessage, ModelRequest, ModelResponse } from '../../src/kernel/model'
import { ScriptedModel } from '../../src/llm/scripted-model'

const answer = (text: string): ModelResponse => ({ text, finishReason: 'stop' })

/** A conversation in which the model has already answered `turns` times. */
function after(turns: number): ModelRequest {
  const messages: ChatMessage[] = [{ role: 'user', content: 'task' }]
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'assistant', content: `turn ${i}` }, { role: 'user', content: 'more' })
  }
  return { protocol: 'text', messages, timeoutMs: 1_000 }
}

describe('ScriptedModel', () => {
  it.each([0, 1, 2])(
    'answers turn %i from the assistant messages already in the request',
    async (turn) => {
      // A fresh instance per call, as after a Durable Object eviction: no counter to lose.
      const model = new ScriptedModel([answer('a'), answer('b'), answer('c')])
      expect((await model.complete(after(turn))).text).toBe(['a', 'b', 'c'][turn])
    },
  )

  it('records every request it receives', async () => {
    const model = new ScriptedModel([answer('a'), answer('b')], { name: 'test/script' })
    await model.complete(after(0))
    await model.complete(after(1))
    expect(model.name).toBe('test/script')
    expect(model.requests.map((r) => r.messages.length)).toEqual([1, 3])
  })

  it.each([
    ['a list', [answer('a')]],
    ['a function', (_r: ModelRequest, turn: number) => (turn === 0 ? answer('a') : undefined)],
  ])('past the end of %s throws script_exhausted', async (_name, script) => {
    const err = await new ScriptedModel(script).complete(after(1)).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ModelError)
    expect((err as ModelError).options.code).toBe('script_exhausted')
    expect((err as ModelError).message).toBe('scripted model has no output for turn 1')
  })

  it('throws a scripted Error to simulate a provider failure', async () => {
    const failure = new ModelError('provider down', { status: 503, code: 'http' })
    const model = new ScriptedModel([answer('a'), failure])
    await expect(model.complete(after(1))).rejects.toBe(failure)
  })

  it('gives a function script the request and the turn', async () => {
    const model = new ScriptedModel(async (request, turn) =>
      answer(`${turn}:${request.messages.at(-1)?.content}`),
    )
    expect((await model.complete(after(2))).text).toBe('2:more')
  })

  it('hands out copies, so a caller cannot change the script', async () => {
    const model = new ScriptedModel([answer('a')])
    const first = await model.complete(after(0))
    first.text = 'changed'
    expect((await model.complete(after(0))).text).toBe('a')
  })
})
