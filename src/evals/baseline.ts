import { REPORT_FORMAT, type EvalReport } from './report'

/** A case that got worse than in the baseline report. */
export interface Regression {
  case: string
  message: string
}

/** pass^k may fall this much (0.34: one of three trials) before it counts as a regression. */
export const DEFAULT_THRESHOLD = 0.1

/**
 * What `--baseline` fails on: a case that passed (all k trials) and now fails, or whose pass^k
 * fell by more than `threshold`. Cases in only one of the reports, and cases whose trials erred
 * (no verdict), are not compared; `notCompared` lists them so the report can say so.
 */
export function compareToBaseline(
  report: EvalReport,
  baseline: unknown,
  threshold = DEFAULT_THRESHOLD,
): { regressions: Regression[]; notCompared: string[] } {
  const base = asReport(baseline)
  const before = new Map(base.cases.map((c) => [`${c.agent}/${c.name}`, c]))
  const regressions: Regression[] = []
  const notCompared: string[] = []
  for (const now of report.cases) {
    const key = `${now.agent}/${now.name}`
    const was = before.get(key)
    if (!was || now.passHatK === null || was.passHatK === null) {
      notCompared.push(key)
      continue
    }
    if (was.status === 'pass' && now.status === 'fail') {
      regressions.push({
        case: key,
        message: `passed in the baseline, fails now (${now.passed}/${now.passed + now.failed} trials pass)`,
      })
    } else if (was.passHatK - now.passHatK > threshold + 1e-9) {
      regressions.push({
        case: key,
        message: `pass^k fell from ${was.passHatK.toFixed(2)} to ${now.passHatK.toFixed(2)} (threshold ${threshold})`,
      })
    }
  }
  return { regressions, notCompared }
}

function asReport(value: unknown): EvalReport {
  const v = value as Partial<EvalReport> | null
  if (!v || v.format !== REPORT_FORMAT || !Array.isArray(v.cases)) {
    throw new TypeError(
      `the baseline is not an eval report (format "${REPORT_FORMAT}", written by npm run eval -- --out)`,
    )
  }
  return v as EvalReport
}
