import { mean, passAtK, passHatK, percentile } from './pass-k'
import type { TrialOutcome } from './trial'

export const REPORT_FORMAT = 'edgeloop.eval-report'
export const REPORT_VERSION = 1

/** One case over its k trials (docs/evals.md#the-report). */
export interface CaseReport {
  agent: string
  file: string
  name: string
  model: string | null
  metadata: Record<string, string>
  /** `fail` when a trial failed; else `error` when a trial erred; else `pass`. */
  status: 'pass' | 'fail' | 'error'
  trials: TrialOutcome[]
  passed: number
  failed: number
  errored: number
  /** Over the trials that ended with a verdict (errors left out); null when none did. */
  passAtK: number | null
  passHatK: number | null
  meanSteps: number | null
  meanTokens: number | null
  meanCostUsd: number | null
  p50Ms: number | null
  p95Ms: number | null
}

export interface AgentSummary {
  agent: string
  cases: number
  /** Cases all of whose k trials passed. */
  passedCases: number
  failedCases: number
  erroredCases: number
  meanPassHatK: number | null
  totalTokens: number
  totalCostUsd: number | null
}

export interface EvalReport {
  format: typeof REPORT_FORMAT
  version: typeof REPORT_VERSION
  startedAt: string
  finishedAt: string
  k: number
  /** `--model`, when it replaced every case's model. */
  model: string | null
  agents: AgentSummary[]
  cases: CaseReport[]
}

/** A case's figures from its trials. */
export function caseReport(
  head: Pick<CaseReport, 'agent' | 'file' | 'name' | 'model' | 'metadata'>,
  trials: TrialOutcome[],
  k: number,
): CaseReport {
  const count = (s: TrialOutcome['status']) => trials.filter((t) => t.status === s).length
  const passed = count('pass')
  const failed = count('fail')
  const errored = count('error')
  const judged = passed + failed
  const kk = Math.min(k, judged)
  const ran = trials.filter((t) => t.runId !== null && t.status !== 'error')
  const costs = ran.map((t) => t.costUsd).filter((c): c is number => c !== null)
  const ms = ran.map((t) => t.ms)
  return {
    ...head,
    status: failed ? 'fail' : errored ? 'error' : 'pass',
    trials,
    passed,
    failed,
    errored,
    passAtK: kk ? passAtK(judged, passed, kk) : null,
    passHatK: kk ? passHatK(judged, passed, kk) : null,
    meanSteps: mean(ran.map((t) => t.steps)),
    meanTokens: mean(ran.map((t) => t.tokens)),
    meanCostUsd: costs.length === ran.length ? mean(costs) : null,
    p50Ms: percentile(ms, 0.5),
    p95Ms: percentile(ms, 0.95),
  }
}

/** One summary per agent, in the order the cases came. */
export function agentSummaries(cases: readonly CaseReport[]): AgentSummary[] {
  const agents = [...new Set(cases.map((c) => c.agent))]
  return agents.map((agent) => {
    const own = cases.filter((c) => c.agent === agent)
    const hats = own.map((c) => c.passHatK).filter((p): p is number => p !== null)
    const costs = own.flatMap((c) => c.trials.map((t) => t.costUsd))
    return {
      agent,
      cases: own.length,
      passedCases: own.filter((c) => c.status === 'pass').length,
      failedCases: own.filter((c) => c.status === 'fail').length,
      erroredCases: own.filter((c) => c.status === 'error').length,
      meanPassHatK: mean(hats),
      totalTokens: own.reduce((n, c) => n + c.trials.reduce((m, t) => m + t.tokens, 0), 0),
      totalCostUsd:
        costs.length && costs.every((c) => c !== null) ? costs.reduce((a, b) => a! + b!, 0) : null,
    }
  })
}

/** One report of several run one after another (the phases of `fakePhases`), cases in `order`. */
export function combineReports(
  reports: readonly EvalReport[],
  order: readonly string[],
): EvalReport {
  const key = (c: CaseReport) => `${c.file}\u0000${c.name}`
  const cases = reports
    .flatMap((r) => r.cases)
    .sort((a, b) => order.indexOf(key(a)) - order.indexOf(key(b)))
  const first = reports[0]!
  return { ...first, finishedAt: reports.at(-1)!.finishedAt, agents: agentSummaries(cases), cases }
}

/** The console lines of a finished eval: a line per case, each failure, a line per agent. */
export function reportText(report: EvalReport): string {
  const lines: string[] = []
  const pct = (p: number | null) => (p === null ? '  -  ' : `${(p * 100).toFixed(0).padStart(3)}%`)
  for (const c of report.cases) {
    lines.push(
      `${c.status.toUpperCase().padEnd(5)} ${c.agent}/${c.name}  pass@${report.k} ${pct(c.passAtK)}  pass^${report.k} ${pct(c.passHatK)}  ` +
        `steps ${fmt(c.meanSteps)}  tokens ${fmt(c.meanTokens)}  cost ${c.meanCostUsd === null ? '-' : `$${c.meanCostUsd.toFixed(5)}`}  ` +
        `p50 ${fmt(c.p50Ms)}ms p95 ${fmt(c.p95Ms)}ms`,
    )
    for (const t of c.trials) {
      const run = t.runId ? ` run ${t.runId}` : ''
      if (t.status === 'error') lines.push(`      trial ${t.trial} ERROR${run}: ${t.error}`)
      for (const f of t.failures)
        lines.push(`      trial ${t.trial} failed ${f.expectation}${run}: ${f.message}`)
    }
  }
  for (const a of report.agents) {
    lines.push(
      `agent ${a.agent}: ${a.passedCases}/${a.cases} cases pass^${report.k}` +
        `${a.failedCases ? `, ${a.failedCases} failing` : ''}${a.erroredCases ? `, ${a.erroredCases} with errors (provider or Worker, not the agent)` : ''}` +
        `, mean pass^${report.k} ${pct(a.meanPassHatK).trim()}, ${a.totalTokens} tokens${a.totalCostUsd === null ? '' : `, $${a.totalCostUsd.toFixed(4)}`}`,
    )
  }
  return lines.join('\n')
}

function fmt(n: number | null): string {
  return n === null ? '-' : String(Math.round(n * 10) / 10)
}
