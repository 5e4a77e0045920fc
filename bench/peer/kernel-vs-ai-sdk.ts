// The kernel beside the AI SDK's `generateText` in Node, per step: the same scripted
// zero-latency model (steps-1 calls of one tool, then the answer), the same tool answering with
// 1 KiB. Bundled by bench/kernel-vs-ai-sdk.mjs (here, so `ai` resolves from bench/peer's
// packages), which measures it warm in one process and cold in fresh ones.
import type { LanguageModelV4 } from '@ai-sdk/provider'
import { generateText, isStepCount, tool } from 'ai'
import { z } from 'zod'
import { kernelNativeRun, prototypeNativeRun } from '../kernel.bench'

const OBSERVATION = 'x'.repeat(1024)
const USAGE = {
  inputTokens: { total: 100, noCache: 100, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 10, text: 10, reasoning: undefined },
}

/** A language model of the AI SDK's provider specification, answering from a script. */
function scriptedModel(steps: number): LanguageModelV4 {
  let turn = 0
  return {
    specificationVersion: 'v4',
    provider: 'bench',
    modelId: 'bench',
    supportedUrls: {},
    async doGenerate() {
      const k = turn++
      if (k === steps - 1) {
        return {
          content: [{ type: 'text', text: 'all read' }],
          finishReason: { unified: 'stop', raw: undefined },
          usage: USAGE,
          warnings: [],
        }
      }
      return {
        content: [
          {
            type: 'tool-call',
            toolCallId: `call_${k}`,
            toolName: 'fetch_page',
            input: JSON.stringify({ page: k }),
          },
        ],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage: USAGE,
        warnings: [],
      }
    },
    doStream() {
      throw new Error('the bench model does not stream')
    },
  } as LanguageModelV4
}

/** One AI SDK run of `steps` steps, as its docs write a tool loop. */
export async function aiSdkRun(steps: number): Promise<void> {
  const result = await generateText({
    model: scriptedModel(steps),
    prompt: 'Read every page of the document.',
    stopWhen: isStepCount(steps),
    tools: {
      fetch_page: tool({
        description: 'Fetch one page of the document.',
        inputSchema: z.object({ page: z.number().int().min(0) }),
        execute: () => OBSERVATION,
      }),
    },
  })
  if (result.steps.length !== steps) throw new Error(`ai: ${result.steps.length} of ${steps} steps`)
}

export const LOOPS = {
  kernel: kernelNativeRun,
  ai: aiSdkRun,
  prototype: prototypeNativeRun,
} as const

const cpuMicros = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

/** CPU µs per step of `runs` runs of `steps` steps of one loop, read once around them. */
export async function perStep(loop: keyof typeof LOOPS, runs: number, steps: number) {
  const start = cpuMicros()
  for (let i = 0; i < runs; i++) await LOOPS[loop](steps)
  return (cpuMicros() - start) / (runs * steps)
}
