// `node bench/kernel-bench.mjs`: the kernel benchmark alone (npm run bench -- kernel does the same).
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { importTs } from './import-ts.mjs'
import { kernelExtras } from './kernel-extras.mjs'
import { missedGoal } from './verdict.mjs'

const { benchKernel } = await importTs('./kernel.bench.ts')
const extras = await kernelExtras(join(dirname(fileURLToPath(import.meta.url)), '..'))
let report
try {
  if (extras.missing) console.log(`kernel bench: ${extras.missing}`)
  report = await benchKernel(undefined, extras)
} finally {
  extras.cleanup()
}
console.log(report)
// A missed goal fails the command, so scripts and CI can rely on it.
if (report.split('\n').some(missedGoal)) process.exitCode = 1
