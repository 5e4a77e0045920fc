import type { EvalCase } from '../../agents/define-eval'
import type { RunResult } from '../kernel/trace'
import { awaitRun } from './await-run'
import { checkExpectations, type ExpectationFailure } from './expectations'
import { judge } from './judge'
import { callWorker, type RunViewPart, type WorkerClient } from './worker-client'

/**
 * `pass`: every expectation met; `fail`: the agent did something else; `error`: no verdict on the
 * agent, because the provider, the Worker or the judge failed (docs/evals.md#errors).
 */
export type TrialStatus = 'pass' | 'fail' | 'error'

export interface TrialOutcome {
  trial: number
  status: TrialStatus
  /** The run to open in the console (`/console#run=<id>`); null when none started. */
  runId: string | null
  failures: ExpectationFailure[]
  /** Why the trial is an error. */
  error: string | null
  steps: number
  tokens: number
  costUsd: number | null
  /** From the start request to the run's end, as the eval saw it. */
  ms: number
}

export interface TrialOptions {
  agent: string
  /** The model of the case's runs (`--model`, the case's, the file's); absent: the agent's. */
  model?: string
  judgeModel?: string
  timeoutMs: number
}

// A run that ended because the provider failed, or the Worker could not advance it, says
// nothing about the agent.
const NOT_THE_AGENTS_FAULT = new Set(['model_error', 'internal_error'])

/** One trial of a case: a run through the Worker, its approvals answered by the case, checked. */
export async function runTrial(
  client: WorkerClient,
  c: EvalCase,
  trial: number,
  options: TrialOptions,
): Promise<TrialOutcome> {
  const startedAt = Date.now()
  let runId: string | null = null
  const outcome = (
    status: TrialStatus,
    rest: Partial<TrialOutcome>,
    run?: RunResult,
  ): TrialOutcome => ({
    trial,
    status,
    runId,
    failures: [],
    error: null,
    steps: run?.steps.length ?? 0,
    tokens: run ? run.usage.promptTokens + run.usage.completionTokens : 0,
    costUsd: run?.usage.costUsd ?? null,
    ms: Date.now() - startedAt,
    ...rest,
  })
  let run: RunResult
  try {
    // The task, then each follow-up continuing the run before it (a conversation).
    let view: RunViewPart | undefined
    for (const [turn, task] of [c.task, ...(c.followUps ?? [])].entries()) {
      const started: { id: string } = await callWorker(client, 'POST', '/v1/runs', {
        task,
        agent: options.agent,
        ...(options.model ? { model: options.model } : {}),
        ...(c.tools ? { tools: c.tools } : {}),
        ...(c.budget ? { budget: c.budget } : {}),
        ...(runId ? { continue: runId } : {}),
        metadata: { eval: c.name, trial, turn },
      })
      runId = started.id
      view = await awaitRun(
        client,
        runId,
        (call) => c.approvals?.[call.tool] ?? 'deny',
        options.timeoutMs,
      )
    }
    run = view!.result
  } catch (err) {
    return outcome('error', { error: (err as Error).message })
  }
  if (run.stopReason && NOT_THE_AGENTS_FAULT.has(run.stopReason)) {
    return outcome(
      'error',
      { error: `the run ended ${run.stopReason}: ${run.error ?? 'no detail'}` },
      run,
    )
  }
  const failures = checkExpectations(c.expect, run)
  if (c.expect.judge) {
    const verdict = await judge(client, c.expect.judge, c.task, run, {
      ...(options.judgeModel ? { model: options.judgeModel } : {}),
      timeoutMs: options.timeoutMs,
    })
    const where = verdict.runId ? ` (judge run ${verdict.runId})` : ''
    if (verdict.status === 'error') {
      return outcome('error', { failures, error: `judge: ${verdict.reason}${where}` }, run)
    }
    if (verdict.status === 'fail')
      failures.push({ expectation: 'judge', message: `${verdict.reason}${where}` })
  }
  return outcome(failures.length ? 'fail' : 'pass', { failures }, run)
}
