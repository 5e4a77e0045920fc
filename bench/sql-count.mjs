// The storage a Worker's Durable Objects write, counted from inside workerd: a wrapper module
// put in front of a built bundle (its entry becomes the wrapper, the bundle a module beside it)
// whose Durable Object classes extend the bundle's and, before the first one is built, wrap
// `exec` of `ctx.storage.sql` (every SQL statement: the application's own and any library's),
// `put`/`delete` (the key-value API, which writes to the same SQLite) and `setAlarm`. The code
// under test is byte for byte the bundle a deploy uploads. `GET /__bench/storage` answers the
// counts since the last such request (and starts counting afresh): statements, those that
// write (and how often each write statement ran, by its first 70 characters and a short first
// binding, such as the key of a key-value table), rows they wrote
// (each write's cursor, read when asked), key-value writes, alarms set.
import { writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'

/** The counts path the wrapper answers (never one of the Worker's own routes). */
export const COUNTS_PATH = '/__bench/storage'

/**
 * `build` (a WorkerBuild of test/node/worker-runtime.ts) with the counting wrapper as its entry;
 * `classes`: the Durable Object classes (export names) to count in.
 */
export function withStorageCounts(build, classes) {
  const dir = dirname(build.scriptPath)
  const entry = join(dir, 'bench-storage-counts.js')
  writeFileSync(entry, wrapperSource(`./${basename(build.scriptPath)}`, classes))
  return {
    ...build,
    scriptPath: entry,
    modules: [{ type: 'ESModule', path: entry }, ...build.modules],
  }
}

/** Reads (and resets) the counts of a Worker started from `withStorageCounts`. */
export async function storageCounts(baseUrl) {
  const res = await fetch(new URL(COUNTS_PATH, baseUrl))
  if (!res.ok) throw new Error(`${COUNTS_PATH} answered ${res.status}`)
  return res.json()
}

function wrapperSource(bundle, classes) {
  // The bundle's other exports pass through (`export *` yields to the classes declared here).
  return `import * as worker from ${JSON.stringify(bundle)}
export * from ${JSON.stringify(bundle)}
const WRITE = /^\\s*(insert|update|delete|replace|create|drop|alter)\\b/i
let counts = fresh()
let cursors = []
function fresh() {
  return { statements: 0, writes: 0, kvWrites: 0, alarms: 0, byStatement: {} }
}
let wrapped = false
function wrap(storage) {
  if (wrapped) return
  wrapped = true
  const sql = Object.getPrototypeOf(storage.sql)
  const exec = sql.exec
  sql.exec = function (query, ...bindings) {
    const cursor = exec.call(this, query, ...bindings)
    counts.statements++
    if (WRITE.test(query)) {
      counts.writes++
      const first = typeof bindings[0] === 'string' && bindings[0].length <= 24 ? bindings[0] : ''
      const key = (query.replace(/\\s+/g, ' ').trim().slice(0, 70) + ' ' + first).trim()
      counts.byStatement[key] = (counts.byStatement[key] ?? 0) + 1
      cursors.push(cursor)
    }
    return cursor
  }
  const kv = Object.getPrototypeOf(storage)
  for (const name of ['put', 'delete', 'deleteAll']) {
    const method = kv[name]
    kv[name] = function (...args) {
      counts.kvWrites++
      return method.apply(this, args)
    }
  }
  const setAlarm = kv.setAlarm
  kv.setAlarm = function (...args) {
    counts.alarms++
    return setAlarm.apply(this, args)
  }
}
${classes
  .map(
    (name) => `export class ${name} extends worker.${name} {
  constructor(ctx, env) {
    wrap(ctx.storage)
    super(ctx, env)
  }
}`,
  )
  .join('\n')}
export default {
  ...worker.default,
  async fetch(request, env, ctx) {
    if (new URL(request.url).pathname === ${JSON.stringify(COUNTS_PATH)}) {
      const rowsWritten = cursors.reduce((n, c) => n + c.rowsWritten, 0)
      const out = { ...counts, rowsWritten }
      counts = fresh()
      cursors = []
      return Response.json(out)
    }
    return worker.default.fetch(request, env, ctx)
  },
}
`
}
