import { describe, expect, it } from 'vitest'
import { benchContext } from '../../bench/context.bench'
import { benchKernel } from '../../bench/kernel.bench'
import { benchParallel } from '../../bench/parallel.bench'
import { benchStorage } from '../../bench/storage.bench'
import { classify, KINDS } from '../../bench/workerd-perf.mjs'

/**
 * Each in-process benchmark runs once, so none can break unseen between `npm run bench`s (they
 * did: the storage and service benches crashed for a stop before anyone ran them). Speed goals
 * live in the benchmarks: here only the report's shape is checked, and the goals that are counts,
 * not times (tokens, bytes), which hold on any machine. The bundle and service benches need
 * wrangler (a dry-run deploy, `wrangler dev`) and are left to `npm run bench`.
 */

/** The verdict lines of a report: every goal printed once, as PASS or FAIL. */
function verdicts(report: string): string[] {
  return report.split('\n').filter((line) => /^(PASS|FAIL) /.test(line))
}

describe('benchmarks', () => {
  it('kernel: every case measured, every goal judged', { timeout: 120_000 }, async () => {
    const report = await benchKernel({ warmupSteps: 2_000, rounds: 2 })
    for (const protocol of ['text', 'native', 'text\\+agent', 'native\\+agent']) {
      for (const steps of [20, 100]) {
        const row = new RegExp(`^${protocol} +${steps} +kernel +([\\d.]+) +([\\d.]+)`, 'm')
        const figures = row.exec(report)
        expect(figures, `${protocol} ${steps}: a kernel row`).not.toBeNull()
        expect(Number(figures![1])).toBeGreaterThan(0)
        expect(report).toMatch(new RegExp(`^ +${protocol} ${steps} steps: [\\d.]+ µs/step$`, 'm'))
      }
    }
    const lines = verdicts(report)
    // Per case: µs/step and the ratio to its prototype; per protocol and variant (plain, agent):
    // growth; three for the parser.
    expect(lines).toHaveLength(8 * 2 + 4 + 3)
    for (const line of lines) expect(line).toMatch(/\(goal ≤ [\d.]+ ?(µs|ms|x)?[,)]/)
  })

  it('context: the cap holds in both protocols (token counts, not times)', async () => {
    const lines = verdicts(await benchContext())
    expect(lines).toHaveLength(4)
    for (const line of lines) expect(line).toMatch(/^PASS /)
  })

  it('storage: a step writes about its own size, however long the run', async () => {
    const report = await benchStorage()
    expect(report).toMatch(/step 100: +\d+ bytes written/)
    expect(report).toMatch(/goal: within the step's own content \(\d+ bytes\): met/)
  })

  it('parallel: the three-call turn is timed and judged', async () => {
    const lines = verdicts(await benchParallel())
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^(PASS|FAIL) parallel: \d+ ms for the turn \(goal ≤ \d+ ms\)/)
  })

  it('service cost: perf samples are put in the first kind their stack matches', () => {
    // Stacks as `perf script -F ip,sym,dso` prints them (leaf first), one sample per block.
    const frame = (sym: string, dso = 'workerd') => `\t 2aa9b44 ${sym}+0x34 (${dso})`
    const stacks = [
      [frame('fdatasync', '[kernel.kallsyms]'), frame('sqlite3PagerCommitPhaseOne')],
      [frame('sqlite3VdbeExec'), frame('workerd::api::SqlStorage::exec')],
      [frame('v8::internal::Heap::CollectGarbage')],
      [frame('v8::internal::Compiler::Compile')],
      [frame('kj::HttpHeaders::parse'), frame('kj::HttpServer::Connection::loop')],
      [frame('Builtins_CallFunction_ReceiverIsAny'), frame('[unknown]', '[unknown]')],
      [frame('finish_task_switch', '[kernel.kallsyms]')],
      [frame('kj::_::PromiseNode::setSelfPointer')],
    ]
    const script = stacks.map((s) => s.join('\n')).join('\n\n') + '\n'
    const { samples, shares } = classify(script)
    expect(samples).toBe(stacks.length)
    expect(shares).toHaveLength(KINDS.length)
    // One stack per kind, in KINDS order.
    for (const share of shares) expect(share).toBeCloseTo(1 / stacks.length)
  })
})
