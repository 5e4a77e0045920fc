import { unframeObservation } from '../../src/kernel/tool-output'
import { afterEach, describe, expect, it } from 'vitest'
import { react, type ChatMessage, type ModelRequest } from '../../src/kernel/index'
import { calculator } from '../../tools/calculator'
import { createHttpGetTool } from '../../tools/http-get'
import { createHttpPostTool } from '../../tools/http-post'
import { created, RECEIVER_HOST } from './harness'
import { Outbound } from '../fakes/outbound'
import { nativeAnswer, nativeCall, nativeCalls, ScriptedModel } from '../fakes/scripted-model'

let outbound: Outbound | undefined
afterEach(() => {
  outbound?.restore()
  outbound = undefined
})

const PAGE_HOST = 'docs.allowed.test'

/** The content of the last `tool` message the model was sent. */
function lastObservation(request: ModelRequest): string {
  const last = request.messages.findLast((m) => m.role === 'tool') as
    Extract<ChatMessage, { role: 'tool' }> | undefined
  return unframeObservation(last?.content ?? '')
}

describe('calculator in a whole run', () => {
  it('happy path: the model reads the exact result', async () => {
    const model = new ScriptedModel([
      nativeCalls([nativeCall('calculator', { expression: '(1200 - 950) / 950 * 100' })]),
      nativeAnswer('Up 26.3%.'),
    ])
    const result = await react('How much did traffic grow?', [calculator], { model })

    expect(result).toMatchObject({ ok: true, answer: 'Up 26.3%.' })
    expect(result.steps[0]!.calls[0]!.observation).toBe('(1200 - 950) / 950 * 100 = 26.3157894737')
    expect(lastObservation(model.requests[1]!)).toBe('(1200 - 950) / 950 * 100 = 26.3157894737')
  })

  it('a bad expression comes back as [ToolError]; the model corrects it', async () => {
    const model = new ScriptedModel((request, turn) => {
      if (turn === 0) return nativeCalls([nativeCall('calculator', { expression: '2 +* 3' }, 'c0')])
      const seen = lastObservation(request)
      if (turn === 1 && seen.startsWith('[ToolError] calculator'))
        return nativeCalls([nativeCall('calculator', { expression: '2 * 3' }, 'c1')])
      if (turn === 2) return nativeAnswer(`It is ${seen.split(' = ')[1]}.`)
      return undefined
    })
    const result = await react('2 times 3?', [calculator], { model })

    expect(result).toMatchObject({ ok: true, answer: 'It is 6.' })
    expect(result.steps[0]!.calls[0]).toMatchObject({ kind: 'tool_error' })
    expect(result.steps[0]!.calls[0]!.observation).toMatch(/^\[ToolError\] calculator failed: /)
    expect(result.steps[1]!.calls[0]).toMatchObject({ kind: 'ok', observation: '2 * 3 = 6' })
  })
})

describe('http_get with a page larger than maxObservationTokens', () => {
  // Numbered, distinct lines: a missing or repeated slice changes the concatenation.
  const page = Array.from(
    { length: 150 },
    (_, i) => `line ${String(i).padStart(4, '0')}: status of shard ${(i * 7919) % 1000} is nominal`,
  ).join('\n')
  const original = `HTTP 200 OK (text/plain)\n\n${page}`
  const SLICE = 1_500

  it('is truncated with a handle, and read_observation slices concatenate to the whole page', async () => {
    outbound = new Outbound()
      .on(PAGE_HOST, () => new Response(page, { headers: { 'content-type': 'text/plain' } }))
      .install()
    const slices: string[] = []
    let handle = ''
    const model = new ScriptedModel((request, turn) => {
      if (turn === 0) {
        return nativeCalls([nativeCall('http_get', { url: `https://${PAGE_HOST}/shards` }, 'g0')])
      }
      const seen = lastObservation(request)
      if (turn === 1) {
        handle = /handle "([^"]+)"/.exec(seen)?.[1] ?? ''
        const args = { handle, offset: 0, length: SLICE }
        return nativeCalls([nativeCall('read_observation', args, `r${turn}`)])
      }
      // `[<handle> characters a–b of n]\n<slice>\n[… remain; continue with offset X]`
      const body = seen.slice(seen.indexOf('\n') + 1, seen.lastIndexOf('\n['))
      slices.push(body)
      const next = /continue with offset (\d+)\]$/.exec(seen)
      if (!next) return nativeAnswer(`read ${slices.join('').length} characters`)
      const args = { handle, offset: Number(next[1]), length: SLICE }
      return nativeCalls([nativeCall('read_observation', args, `r${turn}`)])
    })

    const result = await react(
      'Read the shard status page.',
      [createHttpGetTool({ allowlist: [PAGE_HOST] })],
      {
        model,
        budget: { maxObservationTokens: 500, maxSteps: 20 },
      },
    )

    expect(result.ok).toBe(true)
    const first = result.steps[0]!.calls[0]!
    expect(first).toMatchObject({
      truncated: true,
      originalSize: original.length,
      handle: 'obs_g0',
    })
    expect(first.observation).toContain(`${original.length} characters in all; handle "obs_g0"`)
    expect(first.observation.startsWith(original.slice(0, 200))).toBe(true)
    // Every slice fitted the observation limit, so none was truncated again.
    for (const step of result.steps.slice(1, -1)) {
      expect(step.calls[0]).toMatchObject({
        name: 'read_observation',
        truncated: false,
        kind: 'ok',
      })
    }
    expect(slices.length).toBe(Math.ceil(original.length / SLICE))
    expect(slices.join('')).toBe(original)
    expect(lastObservation(model.requests.at(-1)!)).toMatch(/\[end of observation\]$/)
    expect(result.answer).toBe(`read ${original.length} characters`)
    expect(outbound.to(PAGE_HOST)).toHaveLength(1)
  })
})

describe('refusals in a whole run', () => {
  it('http_get to a host outside the allowlist is refused before any request', async () => {
    outbound = new Outbound().install() // any request at all fails the test at restore()
    const model = new ScriptedModel([
      nativeCalls([nativeCall('http_get', { url: 'https://evil.test/steal' })]),
      nativeAnswer('refused'),
    ])
    const result = await react('fetch it', [createHttpGetTool({ allowlist: [PAGE_HOST] })], {
      model,
    })

    expect(result.steps[0]!.calls[0]!.observation).toBe(
      `[ToolError] http_get: host evil.test is not in the allowlist (${PAGE_HOST}); ` +
        'use one of those hosts or ask the user to allow this one.',
    )
    expect(outbound.requests).toEqual([])
  })

  const post = () =>
    new ScriptedModel([
      nativeCalls([
        nativeCall('http_post', { url: `https://${RECEIVER_HOST}/hook`, body: { a: 1 } }, 'p0'),
      ]),
      nativeAnswer('did not post'),
    ])

  it.each([
    [
      'deny',
      { mode: 'deny' as const },
      'tool_error',
      'has side effects and is not permitted here (confirm policy "deny")',
    ],
    [
      'ask without a hook',
      { mode: 'ask' as const },
      'denied',
      'was not run: it was denied by confirm hook',
    ],
    ['a hook that says no', () => false, 'denied', 'was not run: it was denied by confirm hook'],
  ])('http_post under %s never reaches the receiver', async (_label, confirm, kind, why) => {
    outbound = new Outbound().on(RECEIVER_HOST, created).install()
    const result = await react('notify', [createHttpPostTool({ allowlist: [RECEIVER_HOST] })], {
      model: post(),
      confirm,
    })

    expect(outbound.to(RECEIVER_HOST)).toEqual([])
    const call = result.steps[0]!.calls[0]!
    expect(call.kind).toBe(kind)
    expect(call.observation).toMatch(/^\[ToolError\] http_post /)
    expect(call.observation).toContain(why)
  })

  it('http_post with a hook that approves is sent once, with the run and call id as key', async () => {
    outbound = new Outbound().on(RECEIVER_HOST, created).install()
    const asked: string[] = []
    const result = await react('notify', [createHttpPostTool({ allowlist: [RECEIVER_HOST] })], {
      model: post(),
      confirm: (call) => {
        asked.push(call.id)
        return true
      },
    })

    expect(asked).toEqual(['p0'])
    const sent = outbound.to(RECEIVER_HOST)
    expect(sent).toHaveLength(1)
    expect(sent[0]!.headers['idempotency-key']).toBe(`${result.id}:p0`)
  })
})
