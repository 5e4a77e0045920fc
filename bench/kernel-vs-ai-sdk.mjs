// The kernel against the AI SDK per step in Node (bench/peer/kernel-vs-ai-sdk.ts): warm, the
// least of ROUNDS interleaved batches after WARMUP_STEPS of each loop in this process; cold,
// each loop's first COLD_STEPS steps in a fresh Node process (FRESH of each, the median). The
// goal: the kernel at least GOAL_FACTOR times cheaper per step, cold and warm.
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { bundleTs } from './import-ts.mjs'
import { judge } from './verdict.mjs'
import { median } from './workerd-cpu.mjs'

const STEPS = 20
const WARMUP_STEPS = 40_000
const COLD_STEPS = 2_000
const ROUNDS = 8
/** Runs per warm batch: about 30 ms of the AI SDK's CPU, the kernel's the same count. */
const BATCH_RUNS = 10
const FRESH = 3
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

/** Runs the comparison; its verdict lines say PASS, FAIL or no measurement. */
export async function benchKernelVsAiSdk(root) {
  const { outfile, cleanup } = await bundle(root)
  try {
    const m = await import(pathToFileURL(outfile).href)
    for (const loop of ['kernel', 'ai']) await m.perStep(loop, WARMUP_STEPS / STEPS, STEPS)
    const least = { kernel: Infinity, ai: Infinity }
    for (let r = 0; r < ROUNDS; r++) {
      for (const loop of r % 2 ? ['ai', 'kernel'] : ['kernel', 'ai']) {
        least[loop] = Math.min(least[loop], await m.perStep(loop, BATCH_RUNS, STEPS))
      }
    }
    const colds = { kernel: [], ai: [] }
    for (let i = 0; i < FRESH; i++) {
      for (const loop of ['kernel', 'ai']) colds[loop].push(await cold(outfile, loop))
    }
    const coldK = median(colds.kernel)
    const coldA = median(colds.ai)
    const line = (label, k, a) =>
      `${judge({ [`kernel ${label} µs/step`]: k, [`AI SDK ${label} µs/step`]: a }, () => a >= GOAL_FACTOR * k)} kernel vs AI SDK, ${label}: kernel ${k.toFixed(1)} µs/step, AI SDK ${a.toFixed(1)} µs/step = ${(a / k).toFixed(1)}x (goal ≥ ${GOAL_FACTOR}x below)`
    return [
      `kernel vs the AI SDK's generateText, Node ${process.version}: ${STEPS}-step native runs, a scripted zero-latency model, one tool answering 1 KiB`,
      `  warm: least of ${ROUNDS} interleaved batches of ${BATCH_RUNS} runs after ${WARMUP_STEPS / 1000}k steps of each; cold: first ${COLD_STEPS / 1000}k steps in a fresh process, median of ${FRESH} (${colds.kernel.map((x) => x.toFixed(1)).join(', ')} and ${colds.ai.map((x) => x.toFixed(1)).join(', ')} µs/step)`,
      line('warm', least.kernel, least.ai),
      line('cold', coldK, coldA),
    ].join('\n')
  } finally {
    await cleanup()
  }
}
