// `node bench/kernel-bench.mjs`: the kernel benchmark alone (npm run bench -- kernel does the same).
import { importTs } from './import-ts.mjs'

const { benchKernel } = await importTs('./kernel.bench.ts')
console.log(await benchKernel())
