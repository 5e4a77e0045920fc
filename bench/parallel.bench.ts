/**
 * Parallel read-only calls: one native turn asks for three read-only tools that
 * each take 300 ms of wall time (a timer, as a slow API would); the run's wall time shows whether
 * they ran at once (~300 ms) or one after another (~900 ms).
 */
import * as z from 'zod/mini'
import { verdictLine } from './verdict.mjs'
import {
  createRunState,
  defineTool,
  MemoryObservationStore,
  runSlice,
  toRunResult,
  ToolRegistry,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from '../src/kernel/index'

const TOOL_MS = 300
const CALLS = 3
const GOAL_MS = 450

const slowRead = defineTool({
  name: 'slow_read',
  description: 'Reads one shard (takes 300 ms).',
  params: z.object({ shard: z.number() }),
  returns: 'The shard name.',
  handler: ({ shard }) =>
    new Promise<string>((resolve) => setTimeout(() => resolve(`shard ${shard}`), TOOL_MS)),
})

/** One turn with three calls, then the answer. */
function threeCallModel(): Model {
  let turn = 0
  return {
    name: 'bench/parallel',
    async complete(_request: ModelRequest): Promise<ModelResponse> {
      if (turn++ > 0) return { text: 'read all shards', finishReason: 'stop' }
      return {
        text: null,
        finishReason: 'tool_calls',
        toolCalls: Array.from({ length: CALLS }, (_, k) => ({
          id: `call_${k}`,
          type: 'function' as const,
          function: { name: 'slow_read', arguments: JSON.stringify({ shard: k }) },
        })),
      }
    },
  }
}

async function wallMs(): Promise<number> {
  const registry = new ToolRegistry([slowRead])
  const state = createRunState({
    id: 'bench_parallel',
    task: 'Read three shards.',
    tools: registry.names(),
    protocol: 'native',
    policy: { mode: 'deny' },
  })
  const started = performance.now()
  const out = await runSlice(
    state,
    { model: threeCallModel(), registry, observations: new MemoryObservationStore() },
    { maxTransitions: Infinity, maxWallMs: Infinity, maxBytes: Infinity },
  )
  const ms = performance.now() - started
  const result = toRunResult(out.state)
  if (!result.ok) throw new Error(`parallel bench run failed: ${result.stopReason}`)
  return ms
}

/** Runs the benchmark and returns a printable report. */
export async function benchParallel(): Promise<string> {
  const runs = [await wallMs(), await wallMs(), await wallMs()].sort((a, b) => a - b)
  const median = runs[1]!
  return [
    `parallel read-only calls: ${CALLS} tools of ${TOOL_MS} ms each in one native turn (median of 3 runs)`,
    `  wall ${median.toFixed(0)} ms (one after another would be ${CALLS * TOOL_MS} ms)`,
    verdictLine(
      { 'turn ms': median },
      () => median <= GOAL_MS,
      `parallel: ${median.toFixed(0)} ms for the turn (goal ≤ ${GOAL_MS} ms)`,
    ),
  ].join('\n')
}
