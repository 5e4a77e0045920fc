/**
 * The request a run sends is cached between thinks (RenderCache, one per slice). Whatever order
 * states arrive in, a cached build must equal a build from nothing.
 */
import { unframeObservation } from '../../src/kernel/tool-output'
import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  buildRequest,
  defineTool,
  react,
  RenderCache,
  ToolRegistry,
  type Protocol,
  type RunState,
} from '../../src/kernel/index'
import {
  nativeAnswer,
  nativeCall,
  nativeCalls,
  ScriptedModel,
  textAction,
  textFinish,
} from '../fakes/scripted-model'

const page = defineTool({
  name: 'page',
  description: 'Reads one page.',
  params: z.object({ n: z.number() }),
  returns: 'The page.',
  handler: ({ n }) => `page ${n}: ${'lorem ipsum '.repeat(n + 1)}`,
})
const registry = new ToolRegistry([page])

/** Every state of a short run, one per transition. */
async function statesOf(protocol: Protocol, task: string): Promise<RunState[]> {
  const states: RunState[] = []
  const turns =
    protocol === 'native'
      ? [
          nativeCalls([nativeCall('page', { n: 0 }, 'c0')], 'first page'),
          nativeCalls([nativeCall('page', { n: 1 }, 'c1'), nativeCall('page', { n: 2 }, 'c2')]),
          nativeAnswer('read'),
        ]
      : [textAction('page', { n: 0 }), textAction('page', { n: 1 }), textFinish('read')]
  const result = await react(task, [page], {
    model: new ScriptedModel(turns),
    protocol,
    onState: (s) => states.push(s),
  })
  expect(result.stopReason).toBe('finish')
  return states
}

const fresh = (state: RunState) => buildRequest(state, registry)

describe('RenderCache', () => {
  it.each<Protocol>(['native', 'text'])(
    '%s: builds what a fresh cache builds, for states in any order and from other runs',
    async (protocol) => {
      const a = await statesOf(protocol, 'read the pages')
      const b = await statesOf(protocol, 'read the pages again')
      // Forward, backward, interleaved runs, and the same state twice.
      const order = [...a, ...a.slice().reverse(), ...a.flatMap((s, i) => [s, b[i] ?? s]), a[2]!]
      const cache = new RenderCache()
      for (const state of order) {
        expect(buildRequest(state, registry, cache)).toEqual(fresh(state))
      }
    },
  )

  it('renders a step again when it is replaced by a different object', async () => {
    const states = await statesOf('native', 'read the pages')
    const last = states.at(-1)!
    const cache = new RenderCache()
    buildRequest(last, registry, cache)
    const first = last.steps[0]!
    const edited: RunState = {
      ...last,
      steps: [
        { ...first, calls: first.calls.map((c) => ({ ...c, observation: 'edited', tokens: 1 })) },
        ...last.steps.slice(1),
      ],
    }
    const built = buildRequest(edited, registry, cache)
    expect(built).toEqual(fresh(edited))
    expect(built.request.messages.map((m) => unframeObservation(m.content ?? ''))).toContain(
      'edited',
    )
  })

  it('starts over when the protocol changes (the native to text fallback)', async () => {
    const states = await statesOf('native', 'read the pages')
    const last = states.at(-1)!
    const cache = new RenderCache()
    buildRequest(last, registry, cache)
    const asText: RunState = { ...last, protocol: 'text' }
    expect(buildRequest(asText, registry, cache)).toEqual(fresh(asText))
    expect(buildRequest(asText, registry, cache).request.tools).toBeUndefined()
  })

  it('hands out a copy: changing a request does not change the next one', async () => {
    const states = await statesOf('text', 'read the pages')
    const last = states.at(-1)!
    const cache = new RenderCache()
    const one = buildRequest(last, registry, cache)
    one.request.messages.push({ role: 'user', content: 'injected' })
    one.request.messages.length = 1
    expect(buildRequest(last, registry, cache)).toEqual(fresh(last))
  })
})
