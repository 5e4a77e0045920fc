/**
 * Bounded context and a cache-friendly prefix: old observations are elided
 * in the request (not the trace) in chunks, never the latest step's, and every request extends
 * the last one byte for byte between cuts, across resumes too.
 */
import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  buildRequest,
  createRunState,
  defineTool,
  parseRunState,
  RenderCache,
  runSlice,
  toRunResult,
  type ChatMessage,
  type ModelRequest,
  type ModelResponse,
  type Protocol,
  type RunState,
  type Tool,
} from '../../src/kernel/index'
import {
  fakeClock,
  nativeAnswer,
  nativeCall,
  nativeCalls,
  ScriptedModel,
  textAction,
  textFinish,
} from '../fakes/scripted-model'
import { sliceDeps, UNLIMITED } from './harness'

const PAGE = 8192
const page = (k: number) => `page ${k} `.padEnd(PAGE, 'abcdefgh ')
const readPage = defineTool({
  name: 'read_page',
  description: 'Reads one 8 KiB page.',
  params: z.object({ page: z.number() }),
  returns: 'The page.',
  handler: ({ page: k }) => page(k),
})

/** Reads pages 0..steps-2, then (optionally) reads back page 0 by handle, then answers. */
function pager(protocol: Protocol, steps: number, readBack = false) {
  return (_req: ModelRequest, turn: number): ModelResponse => {
    const last = turn === steps - 1
    const back = readBack && turn === steps - 2
    if (protocol === 'native') {
      if (last) return nativeAnswer('read every page')
      if (back) {
        return nativeCalls([
          nativeCall(
            'read_observation',
            { handle: 'obs_call_0', offset: 0, length: 20 },
            'call_back',
          ),
        ])
      }
      return nativeCalls([nativeCall('read_page', { page: turn }, `call_${turn}`)])
    }
    if (last) return textFinish('read every page')
    if (back) return textAction('read_observation', { handle: 'obs_text', offset: 0, length: 20 })
    return textAction('read_page', { page: turn }, `read page ${turn}`)
  }
}

async function runPages(protocol: Protocol, cap: number | undefined, steps = 60, readBack = false) {
  const clock = fakeClock()
  const model = new ScriptedModel(pager(protocol, steps, readBack))
  const deps = sliceDeps(model, [readPage], clock.now)
  const state = createRunState({
    id: 'run_ctx',
    task: 'Read every page.',
    tools: ['read_page'],
    protocol,
    policy: { mode: 'deny' },
    budget: {
      maxSteps: steps,
      maxPromptTokens: 1_500_000,
      maxObservationTokens: 4_000,
      loopGuardWindow: 0,
      ...(cap ? { maxContextTokens: cap } : {}),
    },
  })
  const states: RunState[] = []
  const out = await runSlice(state, deps, UNLIMITED, (s) => void states.push(s))
  return { out, model, deps, states }
}

const json = (m: ChatMessage[]) => m.map((x) => JSON.stringify(x))

describe.each(['native', 'text'] as const)('maxContextTokens (%s)', (protocol) => {
  it('a 60-step run with 8 KiB observations finishes under a 20 000-token cap', async () => {
    const { out, model } = await runPages(protocol, 20_000)
    const trace = toRunResult(out.state)
    expect(trace).toMatchObject({ ok: true, stopReason: 'finish' })
    expect(trace.steps).toHaveLength(60)
    for (const step of trace.steps) expect(step.promptTokens).toBeLessThanOrEqual(20_000)
    // The trace keeps every observation whole; requests carry the stubs.
    expect(trace.steps.slice(0, 59).every((s) => s.calls[0]!.observation === page(s.i))).toBe(true)
    const elided = trace.steps.map((s) => s.elidedTokens)
    expect(elided[0]).toBe(0)
    expect(Math.max(...elided)).toBeGreaterThan(10_000)
    // The latest step's observation is never elided.
    for (const req of model.requests.slice(1)) {
      const last = req.messages.at(-1)!
      expect(last.content).not.toContain('[elided:')
    }
  })

  it('without the cap the same run ends on token_budget', async () => {
    const { out } = await runPages(protocol, undefined)
    expect(toRunResult(out.state)).toMatchObject({ ok: false, stopReason: 'token_budget' })
  })

  it('elides in chunks: between cuts each request extends the previous one byte for byte', async () => {
    const { model } = await runPages(protocol, 20_000)
    let cuts = 0
    for (let n = 1; n < model.requests.length; n++) {
      const before = json(model.requests[n - 1]!.messages)
      const now = json(model.requests[n]!.messages)
      // The system prompt, the task and the tool specs never change.
      expect(now.slice(0, 2)).toEqual(before.slice(0, 2))
      expect(JSON.stringify(model.requests[n]!.tools)).toBe(
        JSON.stringify(model.requests[0]!.tools),
      )
      if (JSON.stringify(now.slice(0, before.length)) !== JSON.stringify(before)) cuts++
    }
    // A cut elides down to half the cap: about five 2 000-token steps grow back between cuts.
    expect(cuts).toBeGreaterThan(0)
    expect(cuts).toBeLessThanOrEqual(Math.ceil(60 / 4))
  })

  it('a stub keeps the call, the size and the handle', async () => {
    const { model } = await runPages(protocol, 20_000)
    const text = JSON.stringify(model.requests.at(-1)!.messages)
    expect(text).toMatch(/\[elided: \d+ tokens, read_observation\(\\"obs_(call_|s)\d+(c0)?\\"\)\]/)
    if (protocol === 'native') {
      const assistant = model.requests.at(-1)!.messages.find((m) => m.role === 'assistant')!
      expect(assistant.tool_calls![0]!.function).toEqual({
        name: 'read_page',
        arguments: '{"page":0}',
      })
    }
  })

  it('a resumed run builds the same request, byte for byte (the cut is read from the stored step)', async () => {
    const { states, deps } = await runPages(protocol, 20_000)
    const registry = deps.registry.forRun()
    for (const s of states.filter((x) => x.phase === 'think').slice(20, 40)) {
      const live = buildRequest(s, registry, new RenderCache())
      const parsed = parseRunState(JSON.parse(JSON.stringify(s)))
      if (!parsed.ok) throw new Error(parsed.error)
      const resumed = buildRequest(parsed.state, registry, new RenderCache())
      expect(JSON.stringify(resumed.request)).toBe(JSON.stringify(live.request))
    }
  })
})

describe('read_observation reads an elided observation back', () => {
  it('by the handle its stub names, though it was never truncated', async () => {
    const { out } = await runPages('native', 20_000, 30, true)
    const back = out.state.steps.at(-2)!.calls[0]!
    expect(back.kind).toBe('ok')
    expect(back.observation).toContain('page 0 ')
  })
})

describe('tool-spec tokens per request', () => {
  it.each(['native', 'text'] as const)(
    '%s: recorded per step, and more with more tools',
    async (protocol) => {
      const clock = fakeClock()
      const extra = defineTool({
        name: 'another_tool',
        description: 'Something else entirely, described at some length to cost tokens.',
        params: z.object({ a: z.string(), b: z.optional(z.number()) }),
        returns: 'Text.',
        handler: () => 'x',
      })
      const trace = async (tools: Tool[]) => {
        const model = new ScriptedModel(pager(protocol, 2))
        const deps = sliceDeps(model, tools, clock.now)
        const state = createRunState({
          task: 'Read.',
          tools: tools.map((t) => t.name),
          protocol,
          policy: { mode: 'deny' },
        })
        return toRunResult((await runSlice(state, deps, UNLIMITED)).state)
      }
      const one = await trace([readPage])
      const two = await trace([readPage, extra])
      expect(one.steps[0]!.toolSpecTokens).toBeGreaterThan(20)
      expect(one.steps[1]!.toolSpecTokens).toBe(one.steps[0]!.toolSpecTokens)
      expect(two.steps[0]!.toolSpecTokens).toBeGreaterThan(one.steps[0]!.toolSpecTokens)
    },
  )
})
