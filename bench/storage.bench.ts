/**
 * Bytes the RunStore writes to SQLite per step: a run's state row plus one row per
 * step, so the write for step 100 should be the size of step 100's own content, not of the run.
 * Drives the real kernel and the real RunStorage over a SqlStorage that counts bound bytes.
 */
import {
  createRunState,
  defineTool,
  runSlice,
  ToolRegistry,
  MemoryObservationStore,
} from '../src/kernel/index'
import type { ModelRequest, ModelResponse } from '../src/kernel/model'
import { RunStorage } from '../src/runs/storage'
import * as z from 'zod/mini'
import { judge } from './verdict.mjs'

class CountingSql {
  bytes = 0
  exec(query: string, ...bindings: unknown[]) {
    if (/^\s*(INSERT|UPDATE)/i.test(query)) {
      for (const b of bindings) this.bytes += typeof b === 'string' ? b.length : 8
    }
    return { toArray: () => [], one: () => undefined, [Symbol.iterator]: function* () {} }
  }
}

const KIB = 'x'.repeat(1024)
const echo = defineTool({
  name: 'echo',
  description: 'Returns 1 KiB.',
  params: z.object({ n: z.number() }),
  returns: '1 KiB of text',
  handler: () => KIB,
})

function model(steps: number) {
  return {
    name: 'bench/scripted',
    async complete(req: ModelRequest): Promise<ModelResponse> {
      const turn = req.messages.filter((m) => m.role === 'assistant').length
      if (turn >= steps)
        return {
          text: 'done',
          finishReason: 'stop',
          usage: { promptTokens: 1, completionTokens: 1 },
        }
      return {
        text: `step ${turn}`,
        finishReason: 'tool_calls',
        toolCalls: [
          {
            id: `call_${turn}`,
            type: 'function',
            function: { name: 'echo', arguments: JSON.stringify({ n: turn }) },
          },
        ],
        usage: { promptTokens: 1, completionTokens: 1 },
      }
    },
  }
}

/** Bytes written while each step was the newest, for a run of `steps` steps. */
export async function bytesPerStep(
  steps: number,
): Promise<{ perStep: number[]; stepSize: number[] }> {
  const sql = new CountingSql()
  const storage = new RunStorage(sql as unknown as SqlStorage)
  const registry = new ToolRegistry([echo])
  const state = createRunState({
    task: 'bench',
    tools: ['echo'],
    protocol: 'native',
    policy: { mode: 'allow' },
    budget: {
      maxSteps: steps + 1,
      maxObservationTokens: 20_000,
      loopGuardWindow: 0,
      maxPromptTokens: 1e9,
    },
  })
  const perStep: number[] = []
  const stepSize: number[] = []
  storage.saveState(state)
  await runSlice(
    state,
    { model: model(steps), registry, observations: new MemoryObservationStore() },
    { maxTransitions: Infinity, maxWallMs: Infinity, maxBytes: Infinity },
    (next, event) => {
      const before = sql.bytes
      storage.saveState(next)
      // The model-call record is written before the step it asks for exists: it is that step's.
      const i = next.steps.length - (event.action === 'model_call_started' ? 0 : 1)
      perStep[i] = (perStep[i] ?? 0) + (sql.bytes - before)
      if (next.steps[i]) stepSize[i] = JSON.stringify(next.steps[i]).length
    },
  )
  return { perStep, stepSize }
}

/** `met`, `NOT met`, or no measurement when a step wrote nothing (the counter is broken). */
function storageVerdict(perStep: number[], allowance: number, diff: number): string {
  const word = judge(
    { 'step 10 bytes': perStep[9], 'step 100 bytes': perStep[99], 'step 100 size': allowance },
    () => diff <= allowance,
  )
  return word === 'PASS' ? 'met' : word === 'FAIL' ? 'NOT met' : word
}

export async function benchStorage(): Promise<string> {
  const { perStep, stepSize } = await bytesPerStep(100)
  const at = (i: number) =>
    `${perStep[i - 1]} bytes written (step content ${stepSize[i - 1]} bytes)`
  const diff = Math.abs(perStep[99]! - perStep[9]!)
  const allowance = stepSize[99]!
  return [
    'storage: bytes written per step (state row + the step row, across its transitions)',
    `  step 10:  ${at(10)}`,
    `  step 100: ${at(100)}`,
    `  difference ${diff} bytes; goal: within the step's own content (${allowance} bytes): ${storageVerdict(perStep, allowance, diff)}`,
  ].join('\n')
}
