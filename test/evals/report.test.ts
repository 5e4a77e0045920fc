import { describe, expect, it } from 'vitest'
import {
  agentSummaries,
  caseReport,
  compareToBaseline,
  REPORT_FORMAT,
  reportHtml,
  reportText,
  type CaseReport,
  type EvalReport,
  type TrialOutcome,
} from '../../src/evals/index'

const trial = (
  n: number,
  status: TrialOutcome['status'],
  costUsd: number | null = null,
): TrialOutcome => ({
  trial: n,
  status,
  runId: `run_${n}`,
  failures:
    status === 'fail'
      ? [{ expectation: 'answerContains[0]', message: 'the answer does not contain "<b>42</b>"' }]
      : [],
  error: status === 'error' ? 'the run ended model_error: 500' : null,
  steps: 2,
  tokens: 50,
  costUsd,
  ms: 10,
})

function report(cases: [string, TrialOutcome['status'][]][], k = 3): EvalReport {
  const built: CaseReport[] = cases.map(([name, statuses]) =>
    caseReport(
      { agent: 'oncall', file: 'agents/oncall.eval.ts', name, model: null, metadata: {} },
      statuses.map((s, i) => trial(i + 1, s, 0.001)),
      k,
    ),
  )
  return {
    format: REPORT_FORMAT,
    version: 1,
    startedAt: 't0',
    finishedAt: 't1',
    k,
    model: null,
    agents: agentSummaries(built),
    cases: built,
  }
}

describe('the baseline', () => {
  const base = report(
    [
      ['a', ['pass', 'pass', 'pass']],
      ['b', ['pass', 'pass', 'pass']],
      ['c', ['pass', 'fail', 'pass']],
      ['d', ['error', 'error', 'error']],
    ],
    2,
  )

  it('a case that passed and fails now is a regression; an unchanged one is not', () => {
    const now = report(
      [
        ['a', ['pass', 'pass', 'pass']],
        ['b', ['pass', 'fail', 'pass']],
        ['c', ['pass', 'fail', 'pass']],
        ['d', ['pass', 'pass', 'pass']],
        ['new', ['pass', 'pass', 'pass']],
      ],
      2,
    )
    const out = compareToBaseline(now, base)
    expect(out.regressions).toEqual([
      { case: 'oncall/b', message: 'passed in the baseline, fails now (2/3 trials pass)' },
    ])
    // d had no verdict in the baseline, new is not in it.
    expect(out.notCompared).toEqual(['oncall/d', 'oncall/new'])
  })

  it('pass^k falling by more than the threshold is a regression; by less, not', () => {
    // c: pass^2 over 3 trials with 2 passes = 1/3; with 1 pass = 0.
    const worse = report([['c', ['pass', 'fail', 'fail']]], 2)
    expect(compareToBaseline(worse, base, 0.3).regressions).toEqual([
      { case: 'oncall/c', message: 'pass^k fell from 0.33 to 0.00 (threshold 0.3)' },
    ])
    expect(compareToBaseline(worse, base, 0.34).regressions).toEqual([])
  })

  it('refuses a file that is not a report', () => {
    expect(() => compareToBaseline(report([]), { cases: [] })).toThrow(
      'the baseline is not an eval report',
    )
  })
})

describe('the report', () => {
  const r = report([
    ['passes', ['pass', 'pass', 'pass']],
    ['fails <once>', ['pass', 'fail', 'pass']],
    ['errs', ['error', 'pass', 'pass']],
  ])

  it('sums per agent, counting failing and erring cases apart', () => {
    expect(r.agents).toEqual([
      {
        agent: 'oncall',
        cases: 3,
        passedCases: 1,
        failedCases: 1,
        erroredCases: 1,
        meanPassHatK: 2 / 3,
        totalTokens: 450,
        totalCostUsd: expect.closeTo(0.009, 9),
      },
    ])
  })

  it('as text: a line per case, each failure with its expectation and run, a line per agent', () => {
    const text = reportText(r)
    expect(text).toContain('FAIL  oncall/fails <once>  pass@3 100%  pass^3   0%')
    expect(text).toContain(
      'trial 2 failed answerContains[0] run run_2: the answer does not contain "<b>42</b>"',
    )
    expect(text).toContain('trial 1 ERROR run run_1: the run ended model_error: 500')
    expect(text).toContain(
      'agent oncall: 1/3 cases pass^3, 1 failing, 1 with errors (provider or Worker, not the agent)',
    )
  })

  it('as HTML: self-contained, escaped, two inline plots with a bar per case', () => {
    const html = reportHtml(r, (id) => (id === 'run_2' ? `runs/${id}.json` : null))
    expect(html).not.toMatch(/<script|<link|<img|@import|url\(/)
    expect(html).toContain('fails &#60;once&#62;')
    expect(html).toContain('&#60;b&#62;42&#60;/b&#62;')
    expect(html).not.toContain('<b>42</b>')
    expect(html.match(/<svg /g)).toHaveLength(2)
    expect(html.match(/<rect /g)).toHaveLength(6)
    expect(html).toContain('<a href="runs/run_2.json"><code>run_2</code></a>')
  })
})
