/**
 * The kernel's side of agents: `react()` takes `instructions` and `output`; the instructions
 * come first in the system prompt in both protocols, then the kernel's rules; the prompt stays
 * byte-identical from step to step and across a resume from saved JSON; a structured answer is
 * `result.output`.
 */
import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  createRunState,
  defineTool,
  KernelUsageError,
  parseRunState,
  react,
  runSlice,
  toRunResult,
  type RunState,
} from '../../src/kernel/index'
import {
  nativeCall,
  nativeCalls,
  ScriptedModel,
  textAction,
  textFinish,
} from '../fakes/scripted-model'
import { sliceDeps, UNLIMITED } from './harness'

const lookup = defineTool({
  name: 'lookup',
  description: 'Look a word up.',
  params: z.object({ q: z.string() }),
  returns: 'The entry.',
  handler: ({ q }) => `entry for ${q}`,
})

const INSTRUCTIONS = 'You are the glossary agent. Define words in one line.'
const Entry = z.object({ word: z.string(), definition: z.string() })
const ENTRY = { word: 'idempotent', definition: 'Same effect however often it runs.' }

describe('react() with instructions and output', () => {
  it('native: instructions first, the finish tool offered, the answer is result.output', async () => {
    const model = new ScriptedModel([
      nativeCalls([nativeCall('lookup', { q: 'idempotent' })]),
      nativeCalls([nativeCall('final_answer', { answer: { word: 'idempotent' } }, 'call_f1')]),
      nativeCalls([nativeCall('final_answer', { answer: ENTRY }, 'call_f2')]),
    ])
    const result = await react('Define idempotent', [lookup], {
      model,
      instructions: INSTRUCTIONS,
      output: Entry,
    })
    expect(result).toMatchObject({ ok: true, stopReason: 'finish', output: ENTRY })
    expect(JSON.parse(result.answer)).toEqual(ENTRY)
    const system = model.requests.map((r) => r.messages[0])
    expect(system[0]!.content).toMatch(
      /^You are the glossary agent\. Define words in one line\.\n\nYou are an agent/,
    )
    expect(system[0]!.content).toContain('call final_answer')
    expect(system.every((m) => m!.content === system[0]!.content)).toBe(true)
    expect(model.requests[0]!.tools!.map((t) => t.function.name)).toEqual([
      'lookup',
      'read_observation',
      'final_answer',
    ])
    expect(model.requests[2]!.messages.at(-1)!.content).toContain(
      'answer: value does not have required property "definition"',
    )
  })

  it('text: instructions first, finish with the object as its answer', async () => {
    const model = new ScriptedModel([
      textAction('lookup', { q: 'idempotent' }),
      textAction('finish', { answer: ENTRY }),
    ])
    const result = await react('Define idempotent', [lookup], {
      model,
      protocol: 'text',
      instructions: INSTRUCTIONS,
      output: z.toJSONSchema(Entry) as Record<string, unknown>,
    })
    expect(result).toMatchObject({ ok: true, output: ENTRY })
    const first = model.requests[0]!.messages[0]!.content as string
    expect(first.startsWith(`${INSTRUCTIONS}\n\nYou are an agent`)).toBe(true)
    expect(first).toContain('## Output schema')
    expect(model.requests[1]!.messages[0]!.content).toBe(first)
  })

  it('no instructions and no output: the prompt is the kernel’s rules alone, and answer is text', async () => {
    const model = new ScriptedModel([textFinish('plain')])
    const result = await react('x', [lookup], { model, protocol: 'text' })
    expect(result).toMatchObject({ ok: true, answer: 'plain', agent: { name: 'default' } })
    expect(result).not.toHaveProperty('output')
    expect(model.requests[0]!.messages[0]!.content).toMatch(/^You are an agent/)
  })

  it.each([
    [{ instructions: 7 }, /instructions must be a string/],
    [{ output: 'x' }, /zod schema or a JSON Schema object/],
    [{ output: { type: 'object', required: 3 } }, /invalid output schema: \/required/],
  ])('a bad option throws KernelUsageError: %j', async (option, message) => {
    const model = new ScriptedModel([textFinish('x')])
    await expect(react('x', [lookup], { model, ...(option as object) })).rejects.toThrow(
      KernelUsageError,
    )
    await expect(react('x', [lookup], { model, ...(option as object) })).rejects.toThrow(message)
  })
})

describe('the system prompt across a resume', () => {
  it.each(['native', 'text'] as const)(
    '%s: byte-identical before and after saving and loading',
    async (protocol) => {
      const replies =
        protocol === 'native'
          ? [
              nativeCalls([nativeCall('lookup', { q: 'a' }, 'call_1')]),
              nativeCalls([nativeCall('lookup', { q: 'b' }, 'call_2')]),
              nativeCalls([nativeCall('final_answer', { answer: ENTRY }, 'call_3')]),
            ]
          : [
              textAction('lookup', { q: 'a' }),
              textAction('lookup', { q: 'b' }),
              textAction('finish', { answer: ENTRY }),
            ]
      const model = new ScriptedModel(replies)
      const state = createRunState({
        task: 'Define idempotent',
        tools: ['lookup'],
        protocol,
        agent: {
          name: 'glossary',
          instructions: INSTRUCTIONS,
          output: z.toJSONSchema(Entry) as Record<string, unknown>,
        },
      })
      const deps = () => sliceDeps(model, [lookup], Date.now)
      // One step, then the state goes through JSON as storage keeps it, and a new slice resumes.
      const first = await runSlice(state, deps(), { ...UNLIMITED, maxTransitions: 3 })
      expect(first.state.phase).not.toBe('done')
      const saved = parseRunState(JSON.parse(JSON.stringify(first.state)) as unknown)
      if (!saved.ok) throw new Error(saved.error)
      const done = await runSlice(saved.state as RunState, deps(), UNLIMITED)
      expect(toRunResult(done.state)).toMatchObject({
        ok: true,
        output: ENTRY,
        agent: { name: 'glossary', version: state.agent.version },
      })
      expect(model.requests).toHaveLength(3)
      const systems = model.requests.map((r) => r.messages[0]!.content)
      expect(new Set(systems).size).toBe(1)
      expect(systems[0]!.startsWith(INSTRUCTIONS)).toBe(true)
      if (protocol === 'native') {
        const tools = model.requests.map((r) => JSON.stringify(r.tools))
        expect(new Set(tools).size).toBe(1)
      }
    },
  )
})
