// The kernel against the AI SDK per step in Node (bench/peer/kernel-vs-ai-sdk.ts): warm, ROUNDS
// rounds of one batch of each loop (about BATCH_MS of CPU each) after WARMUP_STEPS of each loop in
// this process, the ratio the median of the rounds'; cold, each loop's first COLD_STEPS steps in
// a fresh Node process (FRESH of each, the median). The goal: the kernel at least GOAL_FACTOR
// times cheaper per step, cold and warm.
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { bundleTs } from './import-ts.mjs'
import { judge, NO_MEASUREMENT, unmeasured } from './verdict.mjs'
import { median } from './workerd-cpu.mjs'

const STEPS = 20
const WARMUP_STEPS = 40_000
const COLD_STEPS = 2_000
const ROUNDS = 12
/**
 * CPU per warm batch, the same for both loops (each loop's runs per batch counted from its own
 * cost after the warm-up). With the same count of runs for both, a kernel batch held about 1 ms
 * against the AI SDK's 30: the least of eight such batches moved from 4.2 to 7.5 µs/step between
 * runs of the bench, as the load and the background work the other loop left did
 * (docs/development.md#kernel-performance).
 */
const BATCH_MS = 30
/**
 * A pause before each batch: V8's compiler and collector threads finish what the batch before
 * left them outside the figure, which counts every thread's CPU. Forcing a collection instead
 * (`gc()`) made both loops several times slower for batches after it.
 */
const SETTLE_MS = 5
const FRESH = 3
/** Runs of each short batch timed to count how many make a batch of BATCH_MS. */
const CALIBRATION_RUNS = 10
const GOAL_FACTOR = 30

/** The comparison, bundled into a temporary folder; `cleanup()` removes it. */
async function bundle(root) {
  const dir = await mkdtemp(join(tmpdir(), 'edgeloop-ai-sdk-'))
  const outfile = join(dir, 'kernel-vs-ai-sdk.mjs')
  // The AI SDK's gateway client `require`s Node built-ins from its ES modules.
  await bundleTs(join(root, 'bench/peer/kernel-vs-ai-sdk.ts'), outfile, { requireShim: true })
  return { outfile, cleanup: () => rm(dir, { recursive: true, force: true }) }
}

/** A loop's first COLD_STEPS steps in a Node process of its own: CPU µs per step. */
async function cold(outfile, loop) {
  const script =
    `const m = await import(${JSON.stringify(pathToFileURL(outfile).href)});` +
    `console.log(await m.perStep(${JSON.stringify(loop)}, ${COLD_STEPS / STEPS}, ${STEPS}))`
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--input-type=module',
    '-e',
    script,
  ])
  return Number(stdout.trim())
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Both loops warm, measured the same way in this process: ROUNDS rounds of one batch of each
 * (which goes first alternates), every batch about BATCH_MS of CPU and after a pause of SETTLE_MS.
 * Each loop's figure is the median of its batches, the ratio the median of the rounds' ratios:
 * the two batches of a round run a few milliseconds apart, under the same load.
 */
async function warmFigures(m) {
  for (const loop of ['kernel', 'ai']) await m.perStep(loop, WARMUP_STEPS / STEPS, STEPS)
  // Runs per batch from the least of a few short batches of each: the first after the warm-up
  // can carry the other loop's compiles (ten times a warm batch's CPU).
  const perStep = { kernel: Infinity, ai: Infinity }
  for (let r = 0; r < 3; r++) {
    for (const loop of ['kernel', 'ai']) {
      await pause(SETTLE_MS)
      perStep[loop] = Math.min(perStep[loop], await m.perStep(loop, CALIBRATION_RUNS, STEPS))
    }
  }
  const runs = {}
  for (const loop of ['kernel', 'ai']) {
    runs[loop] = Math.max(1, Math.round((BATCH_MS * 1000) / (perStep[loop] * STEPS)))
  }
  const batches = { kernel: [], ai: [] }
  const ratios = []
  for (let r = 0; r < ROUNDS; r++) {
    for (const loop of r % 2 ? ['ai', 'kernel'] : ['kernel', 'ai']) {
      await pause(SETTLE_MS)
      batches[loop].push(await m.perStep(loop, runs[loop], STEPS))
    }
    ratios.push(batches.ai[r] / batches.kernel[r])
  }
  return {
    runs,
    median: { kernel: median(batches.kernel), ai: median(batches.ai) },
    least: { kernel: Math.min(...batches.kernel), ai: Math.min(...batches.ai) },
    ratio: median(ratios),
  }
}

/**
 * The bench's 30-line native loop (bench/kernel.bench.ts), cold as the other two: a figure, no
 * goal. It sets the cold goal beside the least a loop costs in the same window: the kernel may
 * cost at most the AI SDK's figure over GOAL_FACTOR, which this line says as a multiple of it.
 */
export function prototypeLine(p, k, a, all) {
  const why = unmeasured({ 'prototype cold µs/step': p, 'AI SDK cold µs/step': a })
  if (why) return `  the 30-line loop, cold: ${NO_MEASUREMENT} (${why})`
  const allowed = a / GOAL_FACTOR
  return `  the 30-line loop (no argument check, budget, trace or resume), cold: ${p.toFixed(1)} µs/step (${all.map((x) => x.toFixed(1)).join(', ')}) = ${(a / p).toFixed(1)}x below the AI SDK; the goal leaves the kernel ${allowed.toFixed(1)} µs/step, ${(allowed / p).toFixed(2)}x this loop (the kernel now ${(k / p).toFixed(2)}x)`
}

/** Runs the comparison; its verdict lines say PASS, FAIL or no measurement. */
export async function benchKernelVsAiSdk(root) {
  const { outfile, cleanup } = await bundle(root)
  try {
    const m = await import(pathToFileURL(outfile).href)
    const warm = await warmFigures(m)
    const colds = { kernel: [], ai: [], prototype: [] }
    for (let i = 0; i < FRESH; i++) {
      for (const loop of ['kernel', 'ai', 'prototype']) colds[loop].push(await cold(outfile, loop))
    }
    const coldK = median(colds.kernel)
    const coldA = median(colds.ai)
    const coldP = median(colds.prototype)
    const line = (label, k, a, ratio = a / k) =>
      `${judge({ [`kernel ${label} µs/step`]: k, [`AI SDK ${label} µs/step`]: a }, () => ratio >= GOAL_FACTOR)} kernel vs AI SDK, ${label}: kernel ${k.toFixed(1)} µs/step, AI SDK ${a.toFixed(1)} µs/step = ${ratio.toFixed(1)}x (goal ≥ ${GOAL_FACTOR}x below)`
    return [
      `kernel vs the AI SDK's generateText, Node ${process.version}: ${STEPS}-step native runs, a scripted zero-latency model, one tool answering 1 KiB`,
      `  warm: ${ROUNDS} rounds of a batch of each (about ${BATCH_MS} ms of CPU: ${warm.runs.kernel} and ${warm.runs.ai} runs) after ${WARMUP_STEPS / 1000}k steps of each, medians, the ratio the median of the rounds' (least ${warm.least.kernel.toFixed(1)} and ${warm.least.ai.toFixed(1)} µs/step); cold: first ${COLD_STEPS / 1000}k steps in a fresh process, median of ${FRESH} (${colds.kernel.map((x) => x.toFixed(1)).join(', ')} and ${colds.ai.map((x) => x.toFixed(1)).join(', ')} µs/step)`,
      line('warm', warm.median.kernel, warm.median.ai, warm.ratio),
      line('cold', coldK, coldA),
      prototypeLine(coldP, coldK, coldA, colds.prototype),
    ].join('\n')
  } finally {
    await cleanup()
  }
}
