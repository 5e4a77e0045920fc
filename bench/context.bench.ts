/**
 * Bounded context: a 60-step run whose every observation is 8 KiB, with and without
 * `maxContextTokens` = 20 000, in both protocols. Prints the cumulative prompt tokens (what the
 * provider bills) and the largest single request, as the kernel recorded them in the trace.
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
  type Protocol,
} from '../src/kernel/index'

const STEPS = 60
const CAP = 20_000
/** The same cumulative budget for both runs: enough for 60 capped requests, not for 60 growing ones. */
const MAX_PROMPT_TOKENS = 1_500_000

// 8 KiB of varied prose-like text (a constant string would look like a loop to nobody, but keep
// it unlike the other observations anyway: the page number leads).
const page = (k: number) =>
  `page ${k}: ` + 'lorem ipsum dolor sit amet '.repeat(304).slice(0, 8192 - 12)

const readPage = defineTool({
  name: 'read_page',
  description: 'Reads one 8 KiB page of the log archive.',
  params: z.object({ page: z.number() }),
  returns: 'The page text.',
  handler: ({ page: k }) => page(k),
})

function pagingModel(protocol: Protocol): Model {
  let turn = 0
  return {
    name: 'bench/context',
    async complete(_request: ModelRequest): Promise<ModelResponse> {
      const k = turn++
      const last = k === STEPS - 1
      if (protocol === 'text') {
        const action = last
          ? { thought: 'done', action: 'finish', args: { answer: 'read every page' } }
          : { thought: `read page ${k}`, action: 'read_page', args: { page: k } }
        return { text: '```json\n' + JSON.stringify(action) + '\n```', finishReason: 'stop' }
      }
      if (last) return { text: 'read every page', finishReason: 'stop' }
      return {
        text: null,
        finishReason: 'tool_calls',
        toolCalls: [
          {
            id: `call_${k}`,
            type: 'function',
            function: { name: 'read_page', arguments: JSON.stringify({ page: k }) },
          },
        ],
      }
    },
  }
}

interface Figures {
  stopReason: string
  steps: number
  cumulative: number
  largest: number
}

async function run(protocol: Protocol, cap: number | undefined): Promise<Figures> {
  const registry = new ToolRegistry([readPage])
  const state = createRunState({
    id: `bench_context_${protocol}`,
    task: 'Read every page of the log archive, then say you are done.',
    tools: registry.names(),
    protocol,
    policy: { mode: 'deny' },
    budget: {
      maxSteps: STEPS,
      maxPromptTokens: MAX_PROMPT_TOKENS,
      maxSeconds: 86_400,
      maxObservationTokens: 4_000,
      ...(cap ? { maxContextTokens: cap } : {}),
    },
  })
  const out = await runSlice(
    state,
    { model: pagingModel(protocol), registry, observations: new MemoryObservationStore() },
    { maxTransitions: Infinity, maxWallMs: Infinity, maxBytes: Infinity },
  )
  const result = toRunResult(out.state)
  const tokens = result.steps.map((s) => s.promptTokens)
  return {
    stopReason: result.stopReason ?? 'not finished',
    steps: result.steps.length,
    cumulative: tokens.reduce((a, b) => a + b, 0),
    largest: Math.max(0, ...tokens),
  }
}

/** Runs the benchmark and returns a printable report. */
export async function benchContext(): Promise<string> {
  const lines = [
    `context: ${STEPS}-step run, 8 KiB observations, maxPromptTokens ${MAX_PROMPT_TOKENS} (cumulative)`,
    'protocol  cap      stop          steps  cumulative-prompt-tokens  largest-request',
  ]
  const verdicts: string[] = []
  for (const protocol of ['native', 'text'] as const) {
    for (const cap of [undefined, CAP]) {
      const f = await run(protocol, cap)
      lines.push(
        `${protocol.padEnd(9)} ${String(cap ?? 'none').padEnd(8)} ${f.stopReason.padEnd(13)} ${String(f.steps).padStart(5)}  ${String(f.cumulative).padStart(24)}  ${String(f.largest).padStart(15)}`,
      )
      if (cap) {
        verdicts.push(
          verdictLine(
            { steps: f.steps, 'largest request tokens': f.largest },
            () => f.stopReason === 'finish' && f.largest <= cap,
            `${protocol} with cap ${cap}: ${f.stopReason} after ${f.steps} steps, largest request ${f.largest} tokens (goal: finish, every request ≤ ${cap})`,
          ),
        )
      } else {
        verdicts.push(
          verdictLine(
            { steps: f.steps, 'cumulative prompt tokens': f.cumulative },
            () => f.stopReason === 'token_budget',
            `${protocol} without a cap: ${f.stopReason} after ${f.steps} steps, ${f.cumulative} prompt tokens (goal: token_budget, the prompt grows until the budget ends it)`,
          ),
        )
      }
    }
  }
  return [...lines, '', ...verdicts].join('\n')
}
