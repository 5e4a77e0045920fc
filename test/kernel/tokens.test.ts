import { unframeObservation } from '../../src/kernel/tool-output'
import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  approxTokens,
  buildRequest,
  defineTool,
  dispatch,
  MemoryObservationStore,
  react,
  readObservationTool,
  ToolRegistry,
  truncateObservation,
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

describe('approxTokens', () => {
  it.each([
    ['', 0],
    ['abcd', 1],
    ['abcde', 2],
    ['a'.repeat(400), 100],
    ['漢字かなカナ한글', 8],
    ['ｆｕｌｌ', 4],
    ['abcd漢字', 3],
  ])('%j ≈ %i tokens', (text, tokens) => {
    expect(approxTokens(text)).toBe(tokens)
  })
})

const MARKER = /\n…\[truncated about (\d+) tokens\]…\n/

describe('truncateObservation', () => {
  it('leaves text within the limit alone', () => {
    expect(truncateObservation('short', 10)).toEqual({
      text: 'short',
      originalSize: 5,
      truncated: false,
      omittedTokens: 0,
      tokens: 2,
    })
  })

  it.each([
    ['ASCII', 'HEAD>' + 'abcdefghij'.repeat(2000) + '<TAIL', 'HEAD>', '<TAIL'],
    ['CJK', '始まり' + '漢字仮名交じり文'.repeat(1000) + '終わり', '始まり', '終わり'],
    ['emoji', '😀'.repeat(3000), '😀', '😀'],
  ])('keeps head and tail of %s text within about the budget', (_label, text, head, tail) => {
    const out = truncateObservation(text, 200)
    expect(out.truncated).toBe(true)
    expect(out.originalSize).toBe(text.length)
    expect(out.text.startsWith(head)).toBe(true)
    expect(out.text.endsWith(tail)).toBe(true)
    const m = MARKER.exec(out.text)!
    expect(m).not.toBeNull()
    expect(Number(m[1])).toBe(out.omittedTokens)
    expect(out.tokens).toBe(approxTokens(out.text))
    const kept = out.text.replace(MARKER, '')
    // What was kept plus what was left out accounts for the whole text.
    expect(
      Math.abs(approxTokens(kept) + out.omittedTokens - approxTokens(text)),
    ).toBeLessThanOrEqual(2)
    expect(approxTokens(kept)).toBeLessThanOrEqual(200)
    expect(approxTokens(kept)).toBeGreaterThan(150)
    // Never a lone surrogate: encodeURIComponent throws on one.
    expect(() => encodeURIComponent(out.text)).not.toThrow()
  })
})

const big = (n: number, unit: string) =>
  Array.from({ length: n }, (_, i) => `${i}:${unit}`).join(' ')

const dump = (name: string, text: string) =>
  defineTool({
    name,
    description: 'Returns a long document.',
    params: z.object({}),
    returns: 'The document.',
    handler: () => text,
  })

describe('large observations', () => {
  it('are stored whole by handle and noted in the observation', async () => {
    const text = big(3000, 'row')
    const store = new MemoryObservationStore()
    const result = await dispatch(
      { id: 'c9', name: 'dump', args: {} },
      {
        registry: new ToolRegistry([dump('dump', text)]),
        runId: 'r',
        observations: store,
        policy: { mode: 'deny' },
        maxObservationTokens: 100,
      },
    )
    expect(result).toMatchObject({
      kind: 'ok',
      truncated: true,
      handle: 'obs_c9',
      originalSize: text.length,
    })
    expect(result.observation).toMatch(MARKER)
    expect(result.observation).toContain(`${text.length} characters in all; handle "obs_c9"`)
    expect(result.tokens).toBe(approxTokens(result.observation))
    expect(store.get('obs_c9')).toBe(text)
  })

  it('read_observation reports a missing handle and an offset past the end', async () => {
    const store = new MemoryObservationStore()
    store.put('obs_x', 'abc')
    const reg = new ToolRegistry([readObservationTool])
    const run = (args: Record<string, unknown>) =>
      dispatch(
        { id: 'r1', name: 'read_observation', args },
        { registry: reg, runId: 'r', observations: store, policy: { mode: 'deny' } },
      )
    expect((await run({ handle: 'obs_y', offset: 0 })).observation).toBe(
      '[ToolError] read_observation failed: Error: no stored observation with handle "obs_y"',
    )
    expect((await run({ handle: 'obs_x', offset: 3 })).observation).toBe(
      '[ToolError] read_observation failed: Error: offset 3 is past the end (the observation has 3 characters)',
    )
  })

  // The model reads the stored observation back slice by slice, following the notes it is given.
  it.each([
    ['ASCII', big(4000, 'ascii row')],
    ['CJK', big(3000, '漢字の行')],
  ])('%s: read back in slices with read_observation, nothing missing', async (_label, text) => {
    const slices: string[] = []
    const model = new ScriptedModel((request, turn) => {
      if (turn === 0) return nativeCalls([nativeCall('dump', {}, 'c_dump')])
      const last = request.messages.at(-1)!
      const seen = unframeObservation(last.content ?? '')
      if (turn > 1) {
        // Every slice comes back whole: a slice is never truncated again.
        expect(seen).not.toMatch(MARKER)
        const body = /^\[obs_c_dump characters \d+–\d+ of \d+\]\n([\s\S]*)\n\[[^\]]*\]$/.exec(seen)
        expect(body).not.toBeNull()
        slices.push(body![1]!)
      }
      if (seen.endsWith('[end of observation]')) return nativeAnswer('read it all')
      const next = /continue with offset (\d+)\]$/.exec(seen)
      const handle = /handle "([^"]+)"/.exec(seen)
      const offset = next ? Number(next[1]) : 0
      expect(turn === 1 ? handle?.[1] : 'obs_c_dump').toBe('obs_c_dump')
      return nativeCalls([
        nativeCall('read_observation', { handle: 'obs_c_dump', offset }, `c_read${turn}`),
      ])
    })
    const result = await react('read the dump', [dump('dump', text)], {
      model,
      budget: { maxSteps: 100, maxPromptTokens: 10_000_000 },
    })
    expect(result.stopReason).toBe('finish')
    expect(result.steps[0]!.calls[0]).toMatchObject({
      truncated: true,
      handle: 'obs_c_dump',
      originalSize: text.length,
    })
    expect(slices.length).toBeGreaterThan(1)
    expect(slices.join('')).toBe(text)
  })
})

describe('observation tokens are counted once', () => {
  it('a stored observation counts its note too', async () => {
    // Rounded counts of pieces do not add up to the count of the whole: it is counted whole.
    for (let n = 1990; n < 2010; n++) {
      const text = 'ab'.repeat(n) + '漢漢漢漢漢'
      const result = await dispatch(
        { id: `c${n}`, name: 'dump', args: {} },
        {
          registry: new ToolRegistry([dump('dump', text)]),
          runId: 'r',
          observations: new MemoryObservationStore(),
          policy: { mode: 'deny' },
          maxObservationTokens: 100,
        },
      )
      expect(result.truncated).toBe(true)
      expect(result.tokens).toBe(approxTokens(result.observation))
    }
  })

  it('a text-protocol request is estimated message by message, each counted whole', async () => {
    const states: RunState[] = []
    await react('read both', [dump('small', big(50, 'row')), dump('cjk', big(40, '漢字'))], {
      model: new ScriptedModel([textAction('small', {}), textAction('cjk', {}), textFinish('ok')]),
      protocol: 'text',
      onState: (s) => states.push(s),
    })
    const registry = new ToolRegistry([dump('small', ''), dump('cjk', '')])
    const built = buildRequest(states.at(-1)!, registry)
    const expected = built.request.messages.reduce(
      (n, m) => n + 4 + approxTokens(m.content ?? ''),
      0,
    )
    expect(built.tokens).toBe(expected)
  })

  const tools = [dump('small', big(50, 'row')), dump('large', big(3000, '漢字の行'))]

  it.each<Protocol>(['native', 'text'])(
    '%s: recorded with the call, and requests estimate the same as counting the text again',
    async (protocol) => {
      const states: RunState[] = []
      const model = new ScriptedModel(
        protocol === 'native'
          ? [
              nativeCalls([nativeCall('small', {}, 'c1'), nativeCall('large', {}, 'c2')]),
              nativeAnswer('done'),
            ]
          : [textAction('small', {}), textAction('large', {}), textFinish('done')],
      )
      const result = await react('read both', tools, {
        model,
        protocol,
        budget: { maxObservationTokens: 500, maxPromptTokens: 10_000_000 },
        onState: (s) => states.push(s),
      })
      expect(result.stopReason).toBe('finish')
      const last = states.at(-1)!
      const calls = last.steps.flatMap((s) => s.calls)
      expect(calls.map((c) => c.truncated ?? false)).toEqual([false, true])
      for (const c of calls) expect(c.tokens).toBe(approxTokens(c.observation!))
      // A state saved before calls carried their tokens is estimated the same way.
      const recount = structuredClone(last)
      for (const step of recount.steps) for (const c of step.calls) c.tokens = null
      const registry = new ToolRegistry(tools)
      expect(buildRequest(last, registry).tokens).toBe(buildRequest(recount, registry).tokens)
    },
  )
})
