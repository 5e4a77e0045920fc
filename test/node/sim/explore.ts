/**
 * The explorers (docs/architecture.md#deterministic-simulation). Exhaustive: for each small
 * scenario, a depth-first enumeration of every schedule within the fault bounds (one crash at
 * any point, one alarm failure or duplicate at any alarm, both orders of two people deciding at
 * once). Random: seeded schedules of longer runs, with every kind of fault. A failing schedule is
 * shrunk to the fewest non-default choices that still break the same invariant.
 */
import {
  encodeSchedule,
  nextPrefix,
  RandomChooser,
  ReplayChooser,
  mulberry32,
  type Chooser,
} from './chooser'
import { randomScenario, type Scenario } from './scenarios'
import { delegationScenario } from './delegation-scenarios'
import { slackPersonScenario, slackScenario } from './slack-scenarios'
import type { FaultBudget } from './sim'
import { World, type Breakage, type Outcome } from './world'
import type { Violation } from './invariants'

/** `rpc` (a call between objects lost, or its answer) happens only in delegated scenarios. */
export const EXHAUSTIVE_BUDGET: FaultBudget = { crash: 1, alarm: 1, rpc: 1 }
export const RANDOM_BUDGET: FaultBudget = {
  crash: 3,
  alarm: 3,
  late: 2,
  net: 6,
  slow: 3,
  provider: 1,
  tool: 2,
  /** Only calls between objects (delegation): other seeds draw exactly what they drew before. */
  rpc: 3,
  /** Only Slack-started schedules: Slack rate-limits a call, or repeats an event it got. */
  slack: 3,
}
const RANDOM_FAULT_TURNS = 400

export interface Stats {
  schedules: number
  states: number
  injected: Map<string, number>
  failures: Failure[]
  ms: number
  cpuMs: number
}

export interface Failure {
  mode: 'exhaustive' | 'random' | 'delegation' | 'slack'
  scenario: Scenario
  /** Exhaustive: the scenario's index; random and delegation: the seed. */
  ref: number
  violation: Violation
  schedule: number[]
  shrunk?: number[]
}

export function newStats(): Stats {
  return { schedules: 0, states: 0, injected: new Map(), failures: [], ms: 0, cpuMs: 0 }
}

/** Counts a schedule; keeps it as a failure when it broke an invariant (returns whether). */
function record(
  stats: Stats,
  out: Outcome,
  of: Pick<Failure, 'mode' | 'scenario' | 'ref'>,
  chooser: Chooser,
): boolean {
  stats.schedules++
  stats.states += out.states
  for (const [k, v] of out.injected) stats.injected.set(k, (stats.injected.get(k) ?? 0) + v)
  const violation = out.violations[0]
  if (violation)
    stats.failures.push({ ...of, violation, schedule: chooser.trail.map((c) => c.chosen) })
  return violation !== undefined
}

export interface RunOptions {
  random?: boolean
  breakage?: Breakage
  seed?: number
}

export async function runOnce(
  scenario: Scenario,
  chooser: Chooser,
  o: RunOptions = {},
): Promise<Outcome> {
  const world = new World(scenario, {
    chooser,
    budget: o.random ? RANDOM_BUDGET : EXHAUSTIVE_BUDGET,
    seed: o.seed ?? 1,
    ...(o.random ? { random: { faultTurns: RANDOM_FAULT_TURNS } } : {}),
    ...(o.breakage ? { breakage: o.breakage } : {}),
  })
  return world.run()
}

/** Every schedule of one scenario within the bounds; stops early after `maxFailures`. */
export async function exhaust(
  scenario: Scenario,
  index: number,
  stats: Stats,
  o: { breakage?: Breakage; maxSchedules?: number; maxFailures?: number } = {},
): Promise<void> {
  let prefix: number[] | undefined = []
  let n = 0
  let failures = 0
  while (prefix) {
    const chooser = new ReplayChooser(prefix)
    const out = await runOnce(scenario, chooser, o.breakage ? { breakage: o.breakage } : {})
    n++
    if (record(stats, out, { mode: 'exhaustive', scenario, ref: index }, chooser)) {
      if (++failures >= (o.maxFailures ?? 3)) return
    }
    if (o.maxSchedules && n >= o.maxSchedules) return
    prefix = nextPrefix(chooser.trail)
  }
}

/** The scenario a seed draws (from its own stream, so shrinking the schedule keeps it). */
export function scenarioOfSeed(seed: number): Scenario {
  return randomScenario(mulberry32(seed * 7919 + 17))
}

/** The delegated run a delegation seed draws (a stream of its own: random seeds stay as they were). */
export function delegationOfSeed(seed: number): Scenario {
  return delegationScenario(mulberry32(seed * 7919 + 23))
}

/** Slack seeds from here on draw a person deciding in a modal or by a question's buttons. */
export const SLACK_PERSON_SEEDS = 1001

/**
 * The Slack-started run a Slack seed draws (a stream of its own, as delegation's); seeds from
 * SLACK_PERSON_SEEDS on, one with Slack's modals and question buttons (a stream of their own).
 */
export function slackOfSeed(seed: number): Scenario {
  if (seed >= SLACK_PERSON_SEEDS) return slackPersonScenario(mulberry32(seed * 7919 + 31))
  return slackScenario(mulberry32(seed * 7919 + 29))
}

export async function randomSchedule(
  seed: number,
  stats: Stats,
  breakage?: Breakage,
  mode: 'random' | 'delegation' | 'slack' = 'random',
): Promise<Outcome> {
  const scenario =
    mode === 'delegation'
      ? delegationOfSeed(seed)
      : mode === 'slack'
        ? slackOfSeed(seed)
        : scenarioOfSeed(seed)
  const chooser = new RandomChooser(seed)
  const out = await runOnce(scenario, chooser, {
    random: true,
    seed,
    ...(breakage ? { breakage } : {}),
  })
  record(stats, out, { mode, scenario, ref: seed }, chooser)
  return out
}

/** The fewest non-default choices that still break the same invariant. */
export async function shrink(f: Failure, breakage?: Breakage): Promise<number[]> {
  let best = [...f.schedule]
  const opts: RunOptions = {
    random: f.mode !== 'exhaustive',
    seed: f.ref,
    ...(breakage ? { breakage } : {}),
  }
  const fails = async (choices: number[]) => {
    const out = await runOnce(f.scenario, new ReplayChooser(choices), opts)
    return out.violations.some((v) => v.kind === f.violation.kind)
  }
  let progress = true
  let tries = 0
  while (progress && tries < 400) {
    progress = false
    for (let i = best.length - 1; i >= 0 && tries < 400; i--) {
      if (!best[i]) continue
      const candidate = [...best]
      candidate[i] = 0
      tries++
      if (await fails(candidate)) {
        best = candidate
        progress = true
      }
    }
  }
  return best
}

export function describeFailure(f: Failure): string {
  const sched = encodeSchedule(f.shrunk ?? f.schedule)
  const flag =
    f.mode === 'delegation' ? '--delegation-seed' : f.mode === 'slack' ? '--slack-seed' : '--seed'
  const replay =
    f.mode !== 'exhaustive'
      ? `npm run sim -- ${flag} ${f.ref}   (shrunk: npm run sim -- ${flag} ${f.ref} --schedule '${sched}')`
      : `npm run sim -- --scenario ${f.ref} --schedule '${sched}'`
  return [
    `VIOLATION ${f.violation.kind} (${f.mode}, scenario "${f.scenario.name}", turn ${f.violation.turn})`,
    `  ${f.violation.detail}`,
    `  replay: ${replay}`,
  ].join('\n')
}
