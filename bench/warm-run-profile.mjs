// Where a warm run's CPU goes: the peer bench's task (bench/peer-cost.mjs) in one workerd under
// `perf` with V8's perf map (bench/workerd-perf.mjs), after warm-up runs; each sample's frames of
// the bundle mapped to their source through the bundle's source map. Prints, per run as sampled:
// kinds, owners, source files and functions on the stack (inclusive), and the innermost named
// frame of each sample (self). docs/development.md#worker-cpu-per-run-beside-the-peer.
//
//   node bench/warm-run-profile.mjs [latency ms] [runs]
//
// PROFILE_TOP=n lists n rows of each table (40); PROFILE_OUT=file keeps `perf script`'s stacks.
import { writeFileSync } from 'node:fs'
import { network, SYSTEMS, TASK_BINDINGS } from './peer-cost.mjs'
import { bundlePlaces, sourcePlaces } from './first-run-profile.mjs'
import {
  FREQUENCY,
  KINDS,
  OWNERS,
  perfStacks,
  stackKind,
  stackOwner,
  startPerfWorker,
} from './workerd-perf.mjs'

const [latency = '0', runs = '30'] = process.argv.slice(2)
const RUNS = Number(runs)
const WARMUP_RUNS = 10
const TOP = Number(process.env.PROFILE_TOP ?? 40)

const { bundleWorker } = await import('../test/node/worker-runtime.ts')
const root = new URL('..', import.meta.url).pathname
const placeOf = sourcePlaces(root, (await bundleWorker()).scriptPath)
const net = network()
const { rt, stop } = await startPerfWorker((r) => net.outbound(r, 'edgeloop'), TASK_BINDINGS)
const add = (m, k) => m.set(k, (m.get(k) ?? 0) + 1)
try {
  const base = await rt.url()
  let n = 0
  for (let i = 0; i < WARMUP_RUNS; i++) await SYSTEMS.edgeloop.run(base, net, `warm-up ${n++}`)
  net.delayMs = Number(latency)
  const script = await perfStacks(rt.pid, async () => {
    for (let i = 0; i < RUNS; i++) await SYSTEMS.edgeloop.run(base, net, `profiled ${n++}`)
  })
  if (process.env.PROFILE_OUT) writeFileSync(process.env.PROFILE_OUT, script)
  let samples = 0
  const kinds = KINDS.map(() => 0)
  const owners = OWNERS.map(() => 0)
  const files = new Map()
  const functions = new Map()
  const self = new Map()
  for (const stack of script.split(/\n\s*\n/)) {
    if (!stack.trim()) continue
    samples++
    kinds[stackKind(stack)]++
    owners[stackOwner(stack)]++
    const places = bundlePlaces(stack, placeOf)
    for (const f of places.files) add(files, f)
    for (const f of places.functions) add(functions, f)
    // The innermost frame: a bundle function by its source, else the symbol perf names.
    const leaf = stack.split('\n').find((f) => /\S/.test(f)) ?? ''
    const at = / index\.js:(\d+):(\d+)/.exec(leaf)
    const place = at && placeOf(Number(at[1]), Number(at[2]))
    add(
      self,
      place
        ? place.fn
        : leaf
            .trim()
            .replace(/^[0-9a-f]+ /, '')
            .replace(/\+0x[0-9a-f]+/, ''),
    )
  }
  const ms = (s) => ((s * 1000) / FREQUENCY / RUNS).toFixed(2).padStart(7)
  console.log(
    `warm-run profile: ${RUNS} runs at ${latency} ms, ${samples} samples, ${ms(samples)} ms a run as sampled`,
  )
  KINDS.forEach((k, i) => console.log(`${ms(kinds[i])}  kind: ${k}`))
  OWNERS.forEach((k, i) => console.log(`${ms(owners[i])}  owner: ${k}`))
  const top = (m, label) => {
    console.log(label)
    for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, TOP))
      console.log(`${ms(v)}  ${k}`)
  }
  top(files, 'source files on the stack (inclusive):')
  top(functions, 'functions on the stack (inclusive):')
  top(self, 'innermost frame (self):')
} finally {
  await stop()
}
