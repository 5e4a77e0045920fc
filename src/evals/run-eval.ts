import type { EvalCase } from '../../agents/define-eval'
import type { EvalFile } from './case-schema'
import {
  agentSummaries,
  caseReport,
  REPORT_FORMAT,
  REPORT_VERSION,
  type EvalReport,
} from './report'
import { runTrial, type TrialOutcome } from './trial'
import type { WorkerClient } from './worker-client'

export interface EvalOptions {
  k: number
  concurrency: number
  /** Replaces every case's model. */
  model?: string
  judgeModel?: string
  /** Per trial, from the start request to the run's end (approvals included). */
  timeoutMs: number
  /** Called after each trial, for a progress line. */
  onTrial?: (done: number, total: number, c: EvalCase, outcome: TrialOutcome) => void
}

/** Runs every case of the files k times, `concurrency` trials at once, and reports. */
export async function runEval(
  client: WorkerClient,
  files: readonly EvalFile[],
  options: EvalOptions,
): Promise<EvalReport> {
  const startedAt = new Date().toISOString()
  const jobs = files.flatMap((file) =>
    file.cases.flatMap((c) =>
      Array.from({ length: options.k }, (_, i) => ({ file, c, trial: i + 1 })),
    ),
  )
  const outcomes = new Map<string, TrialOutcome[]>()
  let next = 0
  let done = 0
  const worker = async () => {
    while (next < jobs.length) {
      const { file, c, trial } = jobs[next++]!
      const model = options.model ?? c.model ?? file.model
      const out = await runTrial(client, c, trial, {
        agent: file.agent,
        ...(model ? { model } : {}),
        ...(options.judgeModel ? { judgeModel: options.judgeModel } : {}),
        timeoutMs: options.timeoutMs,
      })
      const key = `${file.file}\u0000${c.name}`
      outcomes.set(key, [...(outcomes.get(key) ?? []), out])
      options.onTrial?.(++done, jobs.length, c, out)
    }
  }
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(options.concurrency, jobs.length)) }, worker),
  )
  const cases = files.flatMap((file) =>
    file.cases.map((c) =>
      caseReport(
        {
          agent: file.agent,
          file: file.file,
          name: c.name,
          model: options.model ?? c.model ?? file.model ?? null,
          metadata: c.metadata ?? {},
        },
        (outcomes.get(`${file.file}\u0000${c.name}`) ?? []).sort((a, b) => a.trial - b.trial),
        options.k,
      ),
    ),
  )
  return {
    format: REPORT_FORMAT,
    version: REPORT_VERSION,
    startedAt,
    finishedAt: new Date().toISOString(),
    k: options.k,
    model: options.model ?? null,
    agents: agentSummaries(cases),
    cases,
  }
}
