import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import { createRedactor, defineTool, react } from '../../src/kernel/index'
import { nativeAnswer, nativeCall, nativeCalls, ScriptedModel } from '../fakes/scripted-model'

const SECRET = 'sk-test-0123456789abcdef'

function echoTool(seen: unknown[]) {
  return defineTool({
    name: 'echo',
    description: 'Echo the text, and say the key.',
    params: z.object({ text: z.string() }),
    returns: 'The text.',
    handler: ({ text }) => {
      seen.push(text)
      return `you said ${text}; the key is ${SECRET}`
    },
  })
}

describe('react() with a redactor', () => {
  it('takes the secret out of the reply, the arguments the tool gets and the observation', async () => {
    const seen: unknown[] = []
    const model = new ScriptedModel([
      nativeCalls([nativeCall('echo', { text: `key ${SECRET}` }, 'c1')], `I have ${SECRET}.`),
      nativeAnswer(`Done; the key was ${SECRET}.`),
    ])
    const result = await react('echo', [echoTool(seen)], {
      model,
      redact: createRedactor([SECRET]),
    })
    expect(result.ok).toBe(true)
    expect(JSON.stringify(result)).not.toContain(SECRET)
    expect(seen).toEqual(['key [redacted]'])
    expect(result.steps[0]!.thought).toBe('I have [redacted].')
    expect(result.steps[0]!.calls[0]!.observation).toBe(
      'you said key [redacted]; the key is [redacted]',
    )
    expect(result.answer).toBe('Done; the key was [redacted].')
    // What the model was sent back holds no secret either.
    expect(JSON.stringify(model.requests.at(-1)!.messages)).not.toContain(SECRET)
  })

  it('without one, everything is recorded as it came', async () => {
    const seen: unknown[] = []
    const model = new ScriptedModel([
      nativeCalls([nativeCall('echo', { text: `key ${SECRET}` }, 'c1')]),
      nativeAnswer('Done.'),
    ])
    const result = await react('echo', [echoTool(seen)], { model })
    expect(seen).toEqual([`key ${SECRET}`])
    expect(result.steps[0]!.calls[0]!.observation).toBe(
      `you said key ${SECRET}; the key is ${SECRET}`,
    )
  })
})
