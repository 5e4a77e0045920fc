/**
 * `npm run eval` in Node (bundled and started by scripts/eval.mjs; docs/evals.md): the eval files
 * come in through the `eval-files` module the bundler writes (every agents/*.eval.ts and
 * agents/*.recorded.eval.json); the Worker runs in workerd as the tests start it
 * (test/node/worker-runtime.ts), its outbound requests answered by the cases' fakes.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import evalFiles from 'eval-files'
import { AGENT_CATALOG } from '../agents/catalog'
import type { HttpFake } from '../agents/define-eval'
import { LOCAL_MODELS } from '../src/llm/create-model'
import {
  combineReports,
  compareToBaseline,
  EvalFileError,
  fakePhases,
  parseEvalArgs,
  parseEvalFile,
  reportHtml,
  reportText,
  runEval,
  type EvalArgs,
  type EvalFile,
  type EvalReport,
} from '../src/evals/index'
import { bundleWorker, tempStorage, WorkerRuntime } from '../test/node/worker-runtime'
import { fromRun, replayAll } from './eval-recordings'

const root = process.env.EDGELOOP_ROOT ?? process.cwd()
/** Where the eval files are (scripts/eval.mjs resolves EVAL_FILES_DIR), and recordings go. */
const filesDir = process.env.EVAL_FILES_DIR ?? join(root, 'agents')

// Settings of the eval deployment taken from the environment when set (docs/evals.md#settings);
// CONFIRM_POLICY is always `ask`, so that each case answers its side effects' approvals.
const PASSED_THROUGH = [
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'MODEL_PROTOCOL',
  'MODEL_TEMPERATURE',
  'MODEL_MAX_RETRIES',
  'MODEL_STREAM',
  'PRICE_PROMPT_PER_1K_USD',
  'PRICE_COMPLETION_PER_1K_USD',
  'PRICE_CACHED_PROMPT_PER_1K_USD',
  'ENABLED_TOOLS',
  'ENABLED_AGENTS',
  'HTTP_ALLOWLIST',
  'HTTP_POST_IDEMPOTENT',
  'MCP_SERVERS',
  'MAX_STEPS',
  'MAX_SECONDS',
  'MAX_PROMPT_TOKENS',
  'MAX_COST_USD',
]

async function main(): Promise<number> {
  let args: EvalArgs
  let files: EvalFile[]
  try {
    args = parseEvalArgs(process.argv.slice(2))
    files = evalFiles.map(({ file, value }) => parseEvalFile(file, value))
  } catch (err) {
    console.error(err instanceof EvalFileError ? err.message : (err as Error).message)
    return 2
  }
  if (args.agents.length) {
    const known = new Set(files.map((f) => f.agent))
    const unknown = args.agents.filter((a) => !known.has(a))
    if (unknown.length) {
      console.error(
        `no eval file for agent ${unknown.join(', ')}; agents with cases: ${[...known].join(', ')}`,
      )
      return 2
    }
    files = files.filter((f) => args.agents.includes(f.agent))
  }
  if (args.mode === 'from-run') return fromRun(args, root, filesDir)
  if (args.mode === 'replay' || args.mode === 'remodel') return replayAll(args, files, root)
  return evaluate(args, files)
}

async function evaluate(args: EvalArgs, files: EvalFile[]): Promise<number> {
  // Read before anything runs: a baseline that cannot be read would waste the whole eval.
  let baseline: unknown
  if (args.baseline) {
    try {
      baseline = JSON.parse(await readFile(resolve(root, args.baseline), 'utf8'))
      compareToBaseline({ ...(baseline as EvalReport), cases: [] }, baseline)
    } catch (err) {
      console.error(`--baseline ${args.baseline}: ${(err as Error).message}`)
      return 2
    }
  }
  const worker = await bundleWorker()
  const storage = await tempStorage()
  const token = randomBytes(24).toString('hex')
  const model = process.env.MODEL || 'script'
  const models = new Set([model, ...LOCAL_MODELS])
  for (const m of [
    args.model,
    args.judgeModel,
    ...files.flatMap((f) => [f.model, ...f.cases.map((c) => c.model)]),
  ])
    if (m) models.add(m)
  const bindings: Record<string, string> = {
    LOG_LEVEL: 'silent',
    ENABLED_TOOLS: 'calculator,query_metrics,search_logs,read_repo_file,rollback_deploy',
    ENABLED_AGENTS: agentsFor(files).join(','),
    ...Object.fromEntries(
      PASSED_THROUGH.flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])),
    ),
    API_TOKEN: token,
    CONFIRM_POLICY: 'ask',
    MODEL: model,
    MODEL_ALLOWLIST: [...models].join(','),
  }
  // The fakes of the phase running (cases that fake a request differently run apart).
  let fakes: HttpFake[] = []
  const provider = process.env.OPENAI_BASE_URL
    ? new URL(process.env.OPENAI_BASE_URL).host
    : 'api.openai.com'
  const runtime = await WorkerRuntime.start({
    worker,
    storage: storage.path,
    bindings,
    outbound: (request) => answerOutbound(request, fakes, provider, args.live),
  })
  const started = Date.now()
  try {
    const ready = await runtime.fetch('/readyz', { headers: { authorization: `Bearer ${token}` } })
    if (!ready.ok) throw new Error(`the eval deployment is misconfigured: ${await ready.text()}`)
    const total = files.reduce((n, f) => n + f.cases.length, 0) * args.k
    let done = 0
    const reports: EvalReport[] = []
    for (const phase of fakePhases(files)) {
      fakes = phase.flatMap((f) => f.cases.flatMap((c) => c.fakes ?? []))
      reports.push(
        await runEval({ fetch: (p, i) => runtime.fetch(p, i), token }, phase, {
          k: args.k,
          concurrency: args.concurrency,
          timeoutMs: args.timeoutSeconds * 1000,
          ...(args.model ? { model: args.model } : {}),
          ...(args.judgeModel ? { judgeModel: args.judgeModel } : {}),
          onTrial: (_done, _total, c, out) =>
            process.stderr.write(
              `[${++done}/${total}] ${c.name} trial ${out.trial}: ${out.status}${out.runId ? ` (run ${out.runId})` : ''}\n`,
            ),
        }),
      )
    }
    const order = files.flatMap((f) => f.cases.map((c) => `${f.file}\u0000${c.name}`))
    const report = combineReports(reports, order)
    const out = resolve(root, args.out)
    await mkdir(join(out, 'runs'), { recursive: true })
    // The deployment is thrown away: each failed trial's run is kept as its export, to read, or
    // to turn into a case (`--from-run eval-report/runs/<id>.json`).
    const exported = new Set<string>()
    for (const t of report.cases.flatMap((c) => c.trials)) {
      if (t.status === 'pass' || !t.runId) continue
      const res = await runtime.fetch(`/v1/runs/${t.runId}/export`, {
        headers: { authorization: `Bearer ${token}` },
      })
      if (!res.ok) continue
      await writeFile(join(out, 'runs', `${t.runId}.json`), await res.text())
      exported.add(t.runId)
    }
    await writeFile(join(out, 'report.json'), `${JSON.stringify(report, null, 2)}\n`)
    await writeFile(
      join(out, 'report.html'),
      reportHtml(report, (id) => (exported.has(id) ? `runs/${id}.json` : null)),
    )
    console.log(reportText(report))
    console.log(
      `report: ${join(out, 'report.json')} and report.html; ${exported.size} failed runs in ${join(out, 'runs')} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
    )
    const code = exitCode(args, report, baseline)
    if (args.serve) {
      console.log(
        `the eval deployment stays up until Ctrl-C: ${await runtime.url()}console (API token ${token})`,
      )
      await new Promise((resolve) => process.once('SIGINT', resolve))
    }
    return code
  } finally {
    await runtime.stop()
    await storage.remove()
  }
}

/** The agents the files evaluate and those they delegate to, transitively. */
function agentsFor(files: readonly EvalFile[]): string[] {
  const names = new Set<string>()
  const add = (name: string) => {
    if (names.has(name)) return
    names.add(name)
    for (const d of AGENT_CATALOG.find((a) => a.name === name)?.delegates ?? []) add(d)
  }
  for (const f of files) add(f.agent)
  return [...names]
}

/** 0: all good; 1: a failing case, or a regression against the baseline; 2: trials without a verdict. */
function exitCode(args: EvalArgs, report: EvalReport, baseline: unknown): number {
  const errors = report.cases.some((c) => c.errored)
  if (args.baseline) {
    const { regressions, notCompared } = compareToBaseline(report, baseline, args.threshold)
    if (notCompared.length) console.log(`not compared with the baseline: ${notCompared.join(', ')}`)
    for (const r of regressions) console.log(`REGRESSION ${r.case}: ${r.message}`)
    if (regressions.length) return 1
    console.log(`no regression against ${args.baseline}`)
    return errors ? 2 : 0
  }
  if (report.cases.some((c) => c.status === 'fail')) return 1
  return errors ? 2 : 0
}

/** The Worker's outbound requests: a case's fake, the configured provider, or (only with --live) the network. */
async function answerOutbound(
  request: Request,
  fakes: readonly HttpFake[],
  provider: string,
  live: boolean,
): Promise<Response> {
  const fake = fakes.find(
    (f) => (f.method ?? 'GET') === request.method && urlMatches(f.url, request.url),
  )
  if (fake) {
    const body = typeof fake.body === 'string' ? fake.body : JSON.stringify(fake.body ?? null)
    const type = typeof fake.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json'
    return new Response(body, {
      status: fake.status ?? 200,
      headers: { 'content-type': type, ...fake.headers },
    })
  }
  if (live || new URL(request.url).host === provider) return forward(request)
  throw new Error(
    `npm run eval: no fake answers ${request.method} ${request.url}; add it to the case's fakes, or run with --live`,
  )
}

/** The request sent on by Node's fetch (Miniflare's Request is another class than Node's). */
async function forward(request: Request): Promise<Response> {
  const body =
    request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer()
  const res = await fetch(request.url, {
    method: request.method,
    headers: request.headers,
    ...(body ? { body } : {}),
  })
  return new Response(res.body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  })
}

function urlMatches(pattern: string, url: string): boolean {
  return pattern.endsWith('*') ? url.startsWith(pattern.slice(0, -1)) : url === pattern
}

main().then(
  (code) => process.exit(code),
  (err) => {
    // Bad input (an export that is not one, a run not finished) is a TypeError: its message
    // says what to do; anything else is a bug, with its stack.
    console.error(
      err instanceof TypeError
        ? err.message
        : err instanceof Error
          ? (err.stack ?? err.message)
          : String(err),
    )
    process.exit(2)
  },
)
