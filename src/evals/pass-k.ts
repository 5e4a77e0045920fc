/**
 * pass@k and pass^k from n trials of which c passed (docs/evals.md#the-report). With n = k they
 * are "at least one of the k passed" and "all k passed"; with more trials than k they are the
 * unbiased estimates over every k-subset of the trials (Chen et al. 2021 for pass@k, Yao et al.
 * 2024, τ-bench, for pass^k).
 */

/** The chance that at least one of k trials drawn from the n passes. */
export function passAtK(n: number, c: number, k: number): number {
  check(n, c, k)
  if (n - c < k) return 1
  return 1 - choose(n - c, k) / choose(n, k)
}

/** The chance that all k trials drawn from the n pass. */
export function passHatK(n: number, c: number, k: number): number {
  check(n, c, k)
  if (c < k) return 0
  return choose(c, k) / choose(n, k)
}

function check(n: number, c: number, k: number): void {
  for (const [name, v] of [
    ['n', n],
    ['c', c],
    ['k', k],
  ] as const) {
    if (!Number.isInteger(v) || v < 0)
      throw new RangeError(`${name} must be a whole number >= 0, got ${v}`)
  }
  if (c > n) throw new RangeError(`c (${c} passed) cannot exceed n (${n} trials)`)
  if (k < 1 || k > n) throw new RangeError(`k must be between 1 and n (${n}), got ${k}`)
}

/** n choose k as a float, by the product formula (exact for the small n of an eval). */
function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0
  let out = 1
  for (let i = 1; i <= k; i++) out = (out * (n - k + i)) / i
  return out
}

/** The mean of a list; null for an empty one. */
export function mean(values: readonly number[]): number | null {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : null
}

/** The nearest-rank percentile (q in 0..1) of a list; null for an empty one. */
export function percentile(values: readonly number[], q: number): number | null {
  if (!values.length) return null
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!
}
