import { describe, expect, it } from 'vitest'
import { benchContext } from '../../bench/context.bench'
import { benchKernel } from '../../bench/kernel.bench'
import { benchParallel } from '../../bench/parallel.bench'
import { benchStorage } from '../../bench/storage.bench'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  judge,
  missedGoal,
  ReadinessTimeout,
  unmeasured,
  verdictLine,
  waitReady,
  within,
} from '../../bench/verdict.mjs'
import { classify, KINDS, stackKind } from '../../bench/workerd-perf.mjs'
import { bundlePlaces } from '../../bench/first-run-profile.mjs'
import { compiledBytes, scriptNames } from '../../bench/first-run-compiled.mjs'
import { freshLines, type FreshStart } from '../../bench/peer-cost.mjs'
import { prototypeLine } from '../../bench/kernel-vs-ai-sdk.mjs'

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

  it('service cost: a perf sample is the kind of its innermost frame that names one', () => {
    // Stacks as `perf script -F ip,sym,dso` prints them (leaf first), one sample per block.
    const frame = (sym: string, dso = 'workerd') => `\t 2aa9b44 ${sym}+0x34 (${dso})`
    const k = '[kernel.kallsyms]'
    const stacks: [string[], number][] = [
      [[frame('fdatasync', k), frame('sqlite3PagerCommitPhaseOne'), frame('Builtins_Call')], 0],
      [[frame('sqlite3VdbeExec'), frame('workerd::api::SqlStorage::exec'), frame('Builtins_A')], 1],
      [[frame('v8::internal::Heap::CollectGarbage'), frame('Builtins_B')], 2],
      [[frame('v8::internal::Compiler::Compile')], 3],
      // JavaScript run for an HTTP request is JavaScript; the request's own parsing is not.
      [[frame('Builtins_CallFunction'), frame('kj::HttpServer::Connection::loop')], 4],
      [[frame('tcmalloc::alloc'), frame('workerd::jsg::Lock::alloc'), frame('kj::HttpServer')], 4],
      [[frame('1a2b3c', '[unknown]'), frame('kj::HttpServer::Connection::loop')], 4],
      [[frame('kj::HttpHeaders::parse'), frame('workerd::jsg::Lock::run')], 5],
      [[frame('tcp_sendmsg', k), frame('kj::AsyncStreamFd::write'), frame('Builtins_C')], 5],
      [[frame('finish_task_switch', k), frame('e000000000000000', '[unknown]')], 6],
      [[frame('kj::_::PromiseNode::setSelfPointer'), frame('e000', '[unknown]')], 7],
    ]
    const script = stacks.map(([s]) => s.join('\n')).join('\n\n') + '\n'
    const { samples, shares } = classify(script)
    expect(samples).toBe(stacks.length)
    expect(shares).toHaveLength(KINDS.length)
    for (const [stack, kind] of stacks) {
      expect(KINDS[stackKind(stack.join('\n'))], stack.join(' < ')).toBe(KINDS[kind])
    }
  })

  it('first-run profile: a sample counts once per source file and function on its stack', () => {
    // JavaScript frames as V8's perf map names them: a function by where it starts in the bundle.
    const frame = (sym: string) => `\t 7f3a2b10 ${sym}+0x1c (/tmp/perf-4242.map)`
    const stack = [
      frame('JS:*jD index.js:1:200'),
      frame('JS:*jD index.js:1:200'),
      frame('JS:~lJ index.js:1:900'),
      frame('Builtins_CallFunction'),
      frame('JS:~Xy index.js:1:5'),
      frame('JS:~Zq entry.worker.js:3:10'),
    ].join('\n')
    const places = new Map([
      ['1:200', { file: 'src/kernel/a.ts', fn: 'src/kernel/a.ts:3 parse' }],
      ['1:900', { file: 'src/kernel/a.ts', fn: 'src/kernel/a.ts:40 load' }],
    ])
    const { files, functions } = bundlePlaces(stack, (line, column) =>
      places.get(`${line}:${column}`),
    )
    expect([...files]).toEqual(['src/kernel/a.ts'])
    expect([...functions]).toEqual(['src/kernel/a.ts:3 parse', 'src/kernel/a.ts:40 load'])
  })

  it('first-run compiled code: each range V8 compiled counts once, by its group', () => {
    // Lines as V8's --log-function-events writes them: event, script id, start, end, time, …
    const log = [
      'script-details,7,index.js,0,0,0,0',
      'script-details,9,node-internal:events,0,0,0,0',
      'function,parse-function,7,100,400,0.2,1000,jD',
      'function,full-parse,7,100,400,0.2,1001,jD',
      'function,parse-function,7,100,400,0.1,1002,jD',
      'function,parse-function,7,500,550,0.1,1003,lJ',
      'function,first-execution,7,500,550,0,1004,lJ',
      'function,parse-script,9,0,2000,0.4,1005,',
      'function,parse-function,12,0,30,0.1,1006,x',
      'code-creation,Builtin,3,1007,0x1,2,Abort',
    ].join('\n')
    const groupOf = (script: string, start: number) =>
      script === 'index.js' ? (start < 450 ? 'src/kernel' : 'node_modules/zod') : script
    const { bytes, functions, groups } = compiledBytes(log, scriptNames(log), groupOf)
    expect(functions).toBe(4)
    expect(bytes).toBe(300 + 50 + 2000 + 30)
    expect(Object.fromEntries(groups)).toEqual({
      'src/kernel': 300,
      'node_modules/zod': 50,
      'node-internal:events': 2000,
      'script 12': 30,
    })
    expect(compiledBytes('', new Map(), groupOf)).toEqual({
      bytes: 0,
      functions: 0,
      groups: new Map(),
    })
  })

  it('peer: a build whose fresh runs skipped part of the task, or whose CPU is 0, gets no figures', () => {
    const start = (over: Partial<FreshStart> = {}): FreshStart => ({
      ...{ first: 60, cpu: 40, second: 30, warm: 32, warmCpu: 20, task: true, resolution: 1e-6 },
      ...over,
    })
    const done = [start(), start({ first: 70, cpu: 45 }), start({ first: 50, cpu: 35 })]
    const builds = { edgeloop: done, peer: done, 'floor, no D1': done, 'floor, plain fetch': done }
    const line = (lines: string[], name: string) => lines.find((l) => l.startsWith(`  ${name} `))!
    const measured = freshLines({ ...builds, floor: done }, 50)
    expect(line(measured, 'floor')).toMatch(
      /^ {2}floor +first 60\.0 \(50\.0–70\.0\) \(CPU 40\.0 \(35\.0–45\.0\)\).* extra 28\.0 \(18\.0–38\.0\) ms wall, 20\.0 \(15\.0–25\.0\) ms CPU$/,
    )
    expect(measured.join('\n')).toMatch(
      /the floor's extra 28\.0 ms wall .* = 25\.0 ms; edgeloop's extra 28\.0 ms/,
    )
    expect(measured.filter(missedGoal)).toEqual([])

    const skipped = freshLines({ ...builds, floor: [start(), start({ task: false }), start()] }, 50)
    expect(line(skipped, 'floor')).toMatch(
      /no measurement \(in 1 of 3 processes the runs skipped part of the task\)$/,
    )
    expect(skipped.filter(missedGoal)).toHaveLength(2)
    expect(skipped.join('\n')).toMatch(
      /the floor beside the goal: no measurement \(the floor's extra missing\)/,
    )

    const zero = freshLines({ ...builds, floor: done.map((s) => start({ ...s, cpu: 0 })) }, 50)
    expect(line(zero, 'floor')).toMatch(/no measurement \(floor first run CPU ms is 0\)$/)
  })

  it('kernel vs AI SDK: the 30-line loop is a figure that says what the cold goal leaves the kernel', () => {
    const line = prototypeLine(8, 50, 400, [7.5, 8, 9])
    expect(line).toBe(
      '  the 30-line loop (no argument check, budget, trace or resume), cold: 8.0 µs/step (7.5, 8.0, 9.0) = 50.0x below the AI SDK; the goal leaves the kernel 13.3 µs/step, 1.67x this loop (the kernel now 6.25x)',
    )
    expect(missedGoal(line)).toBe(false)
    for (const [p, a, why] of [
      [0, 400, 'prototype cold µs/step is 0'],
      [undefined, 400, 'prototype cold µs/step missing'],
      [8, Number.NaN, 'AI SDK cold µs/step is NaN'],
    ] as const) {
      const missing = prototypeLine(p, 50, a, [])
      expect(missing).toBe(`  the 30-line loop, cold: no measurement (${why})`)
      expect(missedGoal(missing)).toBe(true)
    }
  })

  describe('verdicts refuse to judge nothing', () => {
    const passes = () => true
    it.each([
      ['zero', { cpu: 0 }, 'cpu is 0'],
      ['missing', { cpu: undefined }, 'cpu missing'],
      ['null', { cpu: null }, 'cpu missing'],
      ['not a number', { cpu: Number.NaN }, 'cpu is NaN'],
      ['infinite', { cpu: Infinity }, 'cpu is Infinity'],
      ['below its resolution', { cpu: [0.004, 0.01] as [number, number] }, 'cpu 0.004 below 0.01'],
      ['one of two zero', { peer: 1.5, cpu: 0 }, 'cpu is 0'],
    ])('a %s figure is no measurement, even where the goal would pass', (_, figures, why) => {
      expect(unmeasured(figures)).toBe(why)
      expect(judge(figures, passes)).toBe(`no measurement (${why})`)
      const line = verdictLine(figures, passes, 'cost: 0.00 ms vs 0.00 ms (goal ≤ 1x)')
      expect(line).toBe(`no measurement (${why}): cost: 0.00 ms vs 0.00 ms (goal ≤ 1x)`)
      expect(missedGoal(line)).toBe(true)
    })

    it('measured figures are judged by the goal, and only then', () => {
      let asked = 0
      const ok = (v: boolean) => () => (asked++, v)
      expect(judge({ cpu: 0 }, ok(true))).toMatch(/^no measurement/)
      expect(asked).toBe(0)
      expect(judge({ cpu: [0.02, 0.01], peer: 3 }, ok(true))).toBe('PASS')
      expect(verdictLine({ cpu: 2 }, ok(false), 'x')).toBe('FAIL x')
      expect(missedGoal('FAIL x')).toBe(true)
      expect(missedGoal('PASS x')).toBe(false)
    })

    it('no bench writes its own PASS: every verdict goes through bench/verdict.mjs', () => {
      const dir = join(import.meta.dirname, '..', '..', 'bench')
      // A condition turned into the word by hand, where a zero figure would pass.
      const own = /\?\s*'PASS'\s*:/
      const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter(
        (f) => /\.(mjs|ts)$/.test(f) && !f.includes('node_modules') && f !== 'verdict.mjs',
      )
      for (const file of files) {
        expect(own.test(readFileSync(join(dir, file), 'utf8')), file).toBe(false)
      }
    })

    it('a readiness wait times out in one line that names what and the setting', async () => {
      const before = process.env.BENCH_READY_SCALE
      process.env.BENCH_READY_SCALE = '0.001'
      try {
        const waited = waitReady('the peer to answer', () => false, { seconds: 50 })
        await expect(waited).rejects.toBeInstanceOf(ReadinessTimeout)
        await expect(waitReady('the peer to answer', () => false, { seconds: 50 })).rejects.toThrow(
          /^bench: timed out after 0\.05 s waiting for the peer to answer; on a loaded machine raise BENCH_READY_SCALE \(now 0\.001\)$/,
        )
        await expect(within('a callback', new Promise(() => {}), 20)).rejects.toThrow(
          'timed out after 0.02 s waiting for a callback',
        )
        await expect(within('a callback', Promise.resolve(7))).resolves.toBe(7)
        process.env.BENCH_READY_SCALE = 'fast'
        await expect(waitReady('x', () => true)).rejects.toThrow(
          'bench: BENCH_READY_SCALE must be a positive number (got "fast")',
        )
      } finally {
        if (before === undefined) delete process.env.BENCH_READY_SCALE
        else process.env.BENCH_READY_SCALE = before
      }
    })
  })
})
