/**
 * Where a schedule makes its choices (docs/architecture.md#deterministic-simulation). Every
 * nondeterministic point of a simulated run (which ready event goes next, whether the object
 * crashes here, whether an alarm is duplicated, what a provider answers) asks the chooser for an
 * index below `n`; 0 is always the undisturbed choice. A schedule is the list of choices made:
 * replaying the same list replays the run exactly.
 */
import { seededRandom } from '../seeded-random'

export interface Choice {
  label: string
  n: number
  chosen: number
}

export interface Chooser {
  /** An index in [0, n); `p` is the chance of a non-zero answer where the chooser is random. */
  pick(label: string, n: number, p?: number): number
  readonly trail: Choice[]
}

/** Replays `prefix`, then answers 0 (the exhaustive explorer's depth-first enumeration). */
export class ReplayChooser implements Chooser {
  readonly trail: Choice[] = []
  constructor(private readonly prefix: readonly number[]) {}
  pick(label: string, n: number): number {
    const want = this.prefix[this.trail.length] ?? 0
    const chosen = want < n ? want : 0
    this.trail.push({ label, n, chosen })
    return chosen
  }
}

/** Seeded random choices (mulberry32): a seed names one schedule. */
export class RandomChooser implements Chooser {
  readonly trail: Choice[] = []
  readonly #next: () => number
  constructor(seed: number) {
    this.#next = mulberry32(seed)
  }
  pick(label: string, n: number, p = 0.5): number {
    let chosen = 0
    if (n > 1 && this.#next() < p) chosen = 1 + Math.floor(this.#next() * (n - 1))
    this.trail.push({ label, n, chosen })
    return chosen
  }
  /** A raw number in [0, 1) for the scenario's shape (not a schedule choice). */
  random(): number {
    return this.#next()
  }
}

/** Seeded random numbers (mulberry32, shared with the soak). */
export const mulberry32 = seededRandom

/** The next schedule of a depth-first enumeration after `trail`, or undefined when none is left. */
export function nextPrefix(trail: readonly Choice[]): number[] | undefined {
  for (let j = trail.length - 1; j >= 0; j--) {
    const c = trail[j]!
    if (c.chosen + 1 < c.n) return [...trail.slice(0, j).map((t) => t.chosen), c.chosen + 1]
  }
  return undefined
}

/** A schedule as text: its choices, runs of zeros folded (`0*12,1,0*3,2`). */
export function encodeSchedule(choices: readonly number[]): string {
  let end = choices.length
  while (end > 0 && choices[end - 1] === 0) end--
  const out: string[] = []
  for (let i = 0; i < end;) {
    let j = i
    while (j < end && choices[j] === choices[i]) j++
    out.push(j - i > 1 ? `${choices[i]}*${j - i}` : String(choices[i]))
    i = j
  }
  return out.join(',')
}

export function decodeSchedule(text: string): number[] {
  if (!text.trim()) return []
  return text.split(',').flatMap((part) => {
    const [v, times] = part.split('*')
    const value = Number(v)
    if (!Number.isInteger(value) || value < 0) throw new Error(`bad schedule part "${part}"`)
    return Array(times === undefined ? 1 : Number(times)).fill(value) as number[]
  })
}
