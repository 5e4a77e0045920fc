import type { JudgeExpectation } from '../../agents/define-eval'
import type { RunResult } from '../kernel/trace'
import { awaitRun } from './await-run'
import { callWorker, type WorkerClient } from './worker-client'

/** What a judge must answer: its run's output schema. */
export const VERDICT_SCHEMA = {
  type: 'object',
  properties: {
    verdict: { type: 'string', enum: ['pass', 'fail'] },
    reason: { type: 'string', minLength: 1 },
  },
  required: ['verdict', 'reason'],
  additionalProperties: false,
} as const

const GRADER =
  'You grade the answer of an AI agent against a rubric. Read the task, the answer and the ' +
  'rubric; pass the answer only when it meets every point of the rubric. Answer with the verdict ' +
  'and one or two sentences of reason that cite the answer.'

/** The judge's verdict, or why there is none (`error`: the judge failed or left its schema). */
export type Verdict =
  | { status: 'pass' | 'fail'; reason: string; runId: string }
  | { status: 'error'; reason: string; runId: string | null }

/**
 * Asks a judge: a run of its own on the same Worker, with no tools, the grader's instructions and
 * the verdict schema, so a verdict outside the schema ends the judge's run `output_invalid` and
 * is an error, never a pass.
 */
export async function judge(
  client: WorkerClient,
  spec: JudgeExpectation,
  task: string,
  run: RunResult,
  options: { model?: string; timeoutMs: number },
): Promise<Verdict> {
  let runId: string | null = null
  try {
    const model = spec.model ?? options.model
    const started = await callWorker<{ id: string }>(client, 'POST', '/v1/runs', {
      task: `# Task given to the agent\n${task}\n\n# The agent's answer\n${run.answer || '(no answer: the run ended ' + run.stopReason + ')'}\n\n# Rubric\n${spec.rubric}`,
      instructions: spec.instructions ?? GRADER,
      output_schema: VERDICT_SCHEMA,
      tools: [],
      confirm: { mode: 'deny' },
      ...(model ? { model } : {}),
      metadata: { eval: 'judge', judged: run.id },
    })
    runId = started.id
    const view = await awaitRun(client, runId, () => 'deny', options.timeoutMs)
    const out = view.result
    if (!out.ok) {
      const why =
        out.stopReason === 'output_invalid'
          ? 'the judge answered outside its verdict schema'
          : `the judge's run ended ${out.stopReason}`
      return { status: 'error', reason: `${why}${out.error ? `: ${out.error}` : ''}`, runId }
    }
    const verdict = out.output as { verdict: 'pass' | 'fail'; reason: string }
    return { status: verdict.verdict, reason: verdict.reason, runId }
  } catch (err) {
    return { status: 'error', reason: `the judge could not run: ${(err as Error).message}`, runId }
  }
}
