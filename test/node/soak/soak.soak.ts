/**
 * `npm run soak`: hundreds of SIGKILLs at random moments. Each round opens a session
 * with random settings (confirm policy, http_post idempotent or not), starts a few random runs
 * side by side, kills workerd at random times and at random requests while they go, then lets
 * them finish and checks every invariant on every run. Bounded by SOAK_SECONDS (default 300);
 * SOAK_SEED replays a soak. Prints runs, kills and each kind of violation; fails on any.
 */
import { expect, it } from 'vitest'
import { CrashSession } from '../crash/crash-session'
import { runRef } from '../crash/crash-points'
import type { Judged } from '../crash/judge'
import { judge } from '../crash/judge'
import type { ViolationKind } from '../crash/invariants'
import { bundleWorker } from '../worker-runtime'
import { random, randomScript } from './random-run'

const SECONDS = Number(process.env.SOAK_SECONDS ?? 300)
const SEED = Number(process.env.SOAK_SEED ?? Date.now() % 1_000_000)
const RUNS_PER_ROUND = 3
const KILLS_PER_ROUND = 6

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

it(
  `soak: random kills for ${SECONDS} s (seed ${SEED})`,
  { timeout: (SECONDS + 180) * 1000 },
  async () => {
    await bundleWorker()
    const next = random(SEED)
    const deadline = Date.now() + SECONDS * 1000
    const counts = { rounds: 0, runs: 0, kills: 0 }
    const violations = new Map<ViolationKind, number>()
    const examples: string[] = []
    let round = 0
    while (Date.now() < deadline) {
      round++
      const session = await CrashSession.open({
        bindings: {
          CONFIRM_POLICY: next() < 0.3 ? 'ask' : 'allow',
          HTTP_POST_IDEMPOTENT: next() < 0.5 ? 'true' : 'false',
        },
      })
      try {
        const runs = []
        for (let r = 0; r < RUNS_PER_ROUND; r++) {
          const tag = `soak-${round}-${r}`
          const script = randomScript(tag, next)
          const callback = next() < 0.3
          const ref = runRef(tag)
          ref.resolve(
            await session.startRun({
              tag,
              script,
              tools: ['calculator', 'http_get', 'http_post'],
              callback,
            }),
          )
          runs.push({ ...ref, script, callback, cancel: next() < 0.1 })
        }
        // Kills while the runs go: at a random moment, or when a random request arrives.
        const kills = 1 + Math.floor(next() * KILLS_PER_ROUND)
        for (let k = 0; k < kills && Date.now() < deadline; k++) {
          await session.restart()
          if (next() < 0.5) {
            const nth = Math.floor(next() * 4)
            let seen = 0
            const when = next() < 0.5 ? 'before' : 'in_flight'
            session.network.intercept({
              match: () => seen++ === nth,
              when,
              run: () => session.kill(`request ${nth} of runtime, ${when}`),
            })
          }
          await sleep(Math.floor(next() * 1500))
          for (const run of runs) {
            if (run.cancel && next() < 0.3) await session.cancel(run.id).catch(() => {})
          }
          session.network.disarm()
          session.kill('random moment')
        }
        await session.restart()
        counts.rounds++
        for (const run of runs) {
          const view = await session.drive(run.id, { timeoutMs: 30_000 })
          const judged: Judged = await judge(session, run, view)
          counts.runs++
          for (const v of judged.violations) {
            violations.set(v.kind, (violations.get(v.kind) ?? 0) + 1)
            if (examples.length < 20)
              examples.push(`${run.tag} (${run.id}): ${v.kind}: ${v.detail}`)
          }
        }
        counts.kills += session.kills.length
      } finally {
        await session.close()
      }
    }
    const count = (...kinds: ViolationKind[]) =>
      kinds.reduce((n, k) => n + (violations.get(k) ?? 0), 0)
    const summary = {
      seed: SEED,
      rounds: counts.rounds,
      runs: counts.runs,
      kills: counts.kills,
      duplicates: count('duplicate_side_effect', 'duplicate_step'),
      lostSteps: count('lost_step'),
      stuckRuns: count('stuck_run'),
      otherViolations: Object.fromEntries(
        [...violations].filter(
          ([k]) =>
            !['duplicate_side_effect', 'duplicate_step', 'lost_step', 'stuck_run'].includes(k),
        ),
      ),
    }
    process.stdout.write(`\nsoak: ${JSON.stringify(summary, null, 2)}\n`)
    if (examples.length) process.stdout.write(`violations:\n  ${examples.join('\n  ')}\n`)
    expect(examples).toEqual([])
  },
)
