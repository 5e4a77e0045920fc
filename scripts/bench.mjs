#!/usr/bin/env node
// `npm run bench`: prints the figures the issues ask for. Benchmarks print; tests assert.
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchBundle } from '../bench/bundle-size.mjs'
import { benchFanOut } from '../bench/fan-out.mjs'
import { benchFirstRunCompiled } from '../bench/first-run-compiled.mjs'
import { benchFirstRunProfile } from '../bench/first-run-profile.mjs'
import { benchFirstRunTimeline } from '../bench/first-run-timeline.mjs'
import { benchKernelVsAiSdk } from '../bench/kernel-vs-ai-sdk.mjs'
import { benchPeer } from '../bench/peer-cost.mjs'
import { installPeer } from '../bench/peer-build.mjs'
import { benchServiceCost } from '../bench/service-cost.mjs'
import { importTs } from '../bench/import-ts.mjs'
import { kernelExtras } from '../bench/kernel-extras.mjs'
import { benchServiceLatency } from '../bench/service-latency.mjs'
import { missedGoal, NO_MEASUREMENT, ReadinessTimeout } from '../bench/verdict.mjs'
import { startWranglerDev } from '../bench/wrangler-dev.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const only = process.argv[2]
const section = (name) => !only || only === name
/** Goals each section printed as missed (its lines say `FAIL`, `NOT met` or `no measurement`). */
const missed = []
const report = (text) => {
  console.log(text, '\n')
  for (const line of text.split('\n')) if (missedGoal(line)) missed.push(line.trim())
}
/**
 * Runs one section; one that timed out waiting for something (a server, a run) prints the one
 * line that says what and counts as a missed goal, and the next section still runs.
 */
const run = async (name, work) => {
  if (!section(name)) return
  try {
    await work()
  } catch (err) {
    if (!(err instanceof ReadinessTimeout)) throw err
    console.log(`${name}: ${err.message}\n`)
    missed.push(`${name}: ${NO_MEASUREMENT} (${err.message})`)
  }
}

await run('kernel', async () => {
  const { benchKernel } = await importTs('./kernel.bench.ts')
  const extras = await kernelExtras(root)
  try {
    if (extras.missing) console.log(`kernel bench: ${extras.missing}`)
    report(await benchKernel(undefined, extras))
  } finally {
    extras.cleanup()
  }
})
await run('parallel', async () => {
  const { benchParallel } = await importTs('./parallel.bench.ts')
  report(await benchParallel())
})
await run('context', async () => {
  const { benchContext } = await importTs('./context.bench.ts')
  report(await benchContext())
})
await run('storage', async () => {
  const { benchStorage } = await importTs('./storage.bench.ts')
  report(await benchStorage())
})
await run('bundle', async () => report(benchBundle(root)))
await run('fan-out', async () => report(await benchFanOut()))
await run('cost', async () => report(await benchServiceCost()))
// Not in a plain `npm run bench`: it installs the peer's packages (bench/peer) first.
if (only === 'peer') {
  await run('peer', async () => {
    report(await benchPeer(root))
    report(await benchKernelVsAiSdk(root))
  })
}
// Not in a plain `npm run bench`: a fresh process's first run as a timeline, a profile of it
// under `perf`, and the code V8 compiles in it (figures, no goal; the peer part judges it).
if (only === 'first-run') {
  await run('first-run', async () => {
    report(await benchFirstRunTimeline())
    report(await benchFirstRunProfile(root))
    report(await benchFirstRunCompiled(root))
  })
}
// The kernel beside the AI SDK alone (the last part of `peer`, without workerd): for work on the
// kernel's speed (docs/development.md#kernel-performance).
if (only === 'ai-sdk') {
  await run('ai-sdk', async () => {
    await installPeer(root)
    report(await benchKernelVsAiSdk(root))
  })
}
await run('guardrails', async () => {
  const { benchGuardrails } = await importTs('./guardrails.bench.ts')
  report(await benchGuardrails())
})
await run('service', async () => {
  const token = 'bench-token'
  const signingSecret = 'bench-signing-secret'
  // The offline demo model, asked for by name (without it a deployment with no key answers 503).
  const dev = await startWranglerDev(root, {
    MODEL: 'demo',
    API_TOKEN: token,
    SLACK_SIGNING_SECRET: signingSecret,
    SLACK_APPROVERS: 'UBENCH0001',
  })
  try {
    report(await benchServiceLatency(dev.baseUrl, token))
    try {
      const { benchSlackLatency } = await import('../bench/slack-latency.mjs')
      const s = await benchSlackLatency(dev.baseUrl, { signingSecret, n: 100 })
      console.log(
        'Slack interaction to acknowledgement against wrangler dev on 127.0.0.1',
        `\n  median ${s.median_ms.toFixed(1)} ms, p99 ${s.p99_ms.toFixed(1)} ms (n=${s.n}); Slack allows 3000 ms`,
        '\n',
      )
    } catch (err) {
      console.log(`Slack latency: not measured (${err.message})\n`)
    }
  } finally {
    dev.stop()
  }
})

if (missed.length) {
  console.error(`bench: ${missed.length} goal(s) missed:\n  ${missed.join('\n  ')}`)
  process.exitCode = 1
}
