import { describe, expect, it } from 'vitest'
import {
  caseReport,
  mean,
  passAtK,
  passHatK,
  percentile,
  type TrialOutcome,
} from '../../src/evals/index'

describe('pass@k and pass^k', () => {
  it.each([
    // n trials, c passed, k: pass@k, pass^k
    [3, 3, 3, 1, 1],
    [3, 2, 3, 1, 0],
    [3, 0, 3, 0, 0],
    [3, 1, 1, 1 / 3, 1 / 3],
    // 5 trials, 3 passed, k = 2: pass@2 = 1 - C(2,2)/C(5,2) = 0.9; pass^2 = C(3,2)/C(5,2) = 0.3
    [5, 3, 2, 0.9, 0.3],
    // 10 trials, 8 passed, k = 3: pass^3 = C(8,3)/C(10,3) = 56/120
    [10, 8, 3, 1, 56 / 120],
    [10, 5, 3, 1 - 10 / 120, 10 / 120],
  ])('n=%i c=%i k=%i: pass@k %d, pass^k %d', (n, c, k, at, hat) => {
    expect(passAtK(n, c, k)).toBeCloseTo(at, 12)
    expect(passHatK(n, c, k)).toBeCloseTo(hat, 12)
  })

  it('pass^k never exceeds pass@k, and both stay in 0..1', () => {
    for (let n = 1; n <= 8; n++)
      for (let c = 0; c <= n; c++)
        for (let k = 1; k <= n; k++) {
          const at = passAtK(n, c, k)
          const hat = passHatK(n, c, k)
          expect(hat).toBeLessThanOrEqual(at + 1e-12)
          expect(at).toBeLessThanOrEqual(1)
          expect(hat).toBeGreaterThanOrEqual(0)
        }
  })

  it.each([
    [3, 4, 3, 'c (4 passed) cannot exceed n (3 trials)'],
    [3, 1, 4, 'k must be between 1 and n (3), got 4'],
    [3, 1, 0, 'k must be between 1 and n (3), got 0'],
    [2.5, 1, 1, 'n must be a whole number >= 0, got 2.5'],
  ])('refuses n=%d c=%d k=%d', (n, c, k, message) => {
    expect(() => passAtK(n, c, k)).toThrow(message)
    expect(() => passHatK(n, c, k)).toThrow(message)
  })

  it('mean and nearest-rank percentiles', () => {
    expect(mean([])).toBeNull()
    expect(mean([1, 2, 6])).toBe(3)
    expect(percentile([], 0.5)).toBeNull()
    expect(percentile([30, 10, 20], 0.5)).toBe(20)
    expect(
      percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], 0.95),
    ).toBe(19)
    expect(percentile([5], 0.95)).toBe(5)
  })
})

const trial = (
  n: number,
  status: TrialOutcome['status'],
  extra: Partial<TrialOutcome> = {},
): TrialOutcome => ({
  trial: n,
  status,
  runId: `run_${n}`,
  failures: status === 'fail' ? [{ expectation: 'ok', message: 'no' }] : [],
  error: status === 'error' ? 'the run ended model_error' : null,
  steps: 2,
  tokens: 100 * n,
  costUsd: null,
  ms: 100 * n,
  ...extra,
})
const head = { agent: 'a', file: 'agents/a.eval.ts', name: 'c', model: null, metadata: {} }

describe("a case's report", () => {
  it('counts pass, fail and error apart; errors are left out of pass^k, not counted as failures', () => {
    const report = caseReport(head, [trial(1, 'pass'), trial(2, 'pass'), trial(3, 'error')], 3)
    expect(report).toMatchObject({
      status: 'error',
      passed: 2,
      failed: 0,
      errored: 1,
      passAtK: 1,
      passHatK: 1,
    })
    // The error's run is not in the means either.
    expect(report.meanTokens).toBe(150)
    expect(report.p50Ms).toBe(100)
    expect(report.p95Ms).toBe(200)
  })

  it('one failed trial of three: pass@3 1, pass^3 0, status fail', () => {
    const report = caseReport(head, [trial(1, 'pass'), trial(2, 'fail'), trial(3, 'pass')], 3)
    expect(report).toMatchObject({ status: 'fail', passAtK: 1, passHatK: 0 })
  })

  it('every trial erred: no verdict (null), not 0', () => {
    const report = caseReport(head, [trial(1, 'error'), trial(2, 'error')], 2)
    expect(report).toMatchObject({
      status: 'error',
      passAtK: null,
      passHatK: null,
      meanSteps: null,
    })
  })

  it('mean cost only when every run has one', () => {
    expect(
      caseReport(
        head,
        [trial(1, 'pass', { costUsd: 0.01 }), trial(2, 'pass', { costUsd: 0.03 })],
        2,
      ).meanCostUsd,
    ).toBeCloseTo(0.02)
    expect(
      caseReport(head, [trial(1, 'pass', { costUsd: 0.01 }), trial(2, 'pass')], 2).meanCostUsd,
    ).toBeNull()
  })
})
