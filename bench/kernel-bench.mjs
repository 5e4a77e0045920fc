// `node bench/kernel-bench.mjs`: the kernel benchmark alone (npm run bench -- kernel does the same).
import { importTs } from './import-ts.mjs'

const { benchKernel } = await importTs('./kernel.bench.ts')
const report = await benchKernel()
console.log(report)
// A missed goal fails the command, so scripts and CI can rely on it.
if (/^FAIL /m.test(report)) process.exitCode = 1
