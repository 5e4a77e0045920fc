/**
 * The client command the MCP conformance suite (`@modelcontextprotocol/conformance`) runs for
 * each client scenario: `node test/node/mcp-conformance/client.ts <server url>`. It starts the
 * Worker as deployed in workerd (worker-runtime.ts) with the scenario's server as its one MCP
 * server and the scripted model, starts a run that calls that server's tool, and plays the
 * person: it approves the side effect and answers a server's question with the defaults. The
 * suite judges what reached its server (docs/mcp.md#conformance).
 *
 * EDGELOOP_WORKER_BUILD may hold a bundle already built (the test builds it once for every
 * scenario); without it the command bundles the Worker itself.
 */
import { bundleWorker, tempStorage, WorkerRuntime, type WorkerBuild } from '../worker-runtime.ts'

const TOKEN = 'conformance-token'
const SERVER = 'conf'

/**
 * What the "model" does in each scenario: call the scenario server's tool, as a model asked to
 * use it would. A scenario not named here only lists the tools (the run's first slice does).
 */
const SCRIPTS: Record<string, string> = {
  tools_call: `call ${SERVER}__add_numbers with {"a": 5, "b": 3}`,
  'elicitation-sep1034-client-defaults': `call ${SERVER}__test_client_elicitation_defaults`,
  'sse-retry': `call ${SERVER}__test_reconnection`,
}
const AUTH_SCRIPT = `call ${SERVER}__test-tool`

function scriptFor(scenario: string): string {
  const script = SCRIPTS[scenario] ?? (scenario.startsWith('auth/') ? AUTH_SCRIPT : undefined)
  return script ? `${script}, then finish with done` : 'finish with listed'
}

/** Only the scenario's own servers on this machine; anything else is refused. */
async function outbound(request: Request): Promise<Response> {
  const { hostname } = new URL(request.url)
  if (hostname !== 'localhost' && hostname !== '127.0.0.1') {
    return new Response(`conformance client: no network to ${hostname}`, { status: 502 })
  }
  // Miniflare hands over its own Request class, which Node's fetch does not take as is.
  const body = ['GET', 'HEAD'].includes(request.method) ? undefined : await request.arrayBuffer()
  const res = await fetch(request.url, {
    method: request.method,
    headers: [...request.headers],
    ...(body ? { body } : {}),
    redirect: 'manual',
    signal: request.signal,
  })
  return new Response(res.body, { status: res.status, headers: res.headers })
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled'])

interface RunView {
  id: string
  status: string
  pendingApprovals?: { callId: string; argsHash: string; kind?: string }[]
  pendingQuestions?: { id: string }[]
}

async function main(): Promise<number> {
  const url = process.argv.at(-1)
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ''
  if (!url || !/^https?:\/\//.test(url)) {
    console.error('usage: node test/node/mcp-conformance/client.ts <server url>')
    return 2
  }
  const worker: WorkerBuild = process.env.EDGELOOP_WORKER_BUILD
    ? JSON.parse(process.env.EDGELOOP_WORKER_BUILD)
    : await bundleWorker()
  const storage = await tempStorage()
  const runtime = await WorkerRuntime.start({
    worker,
    storage: storage.path,
    bindings: {
      API_TOKEN: TOKEN,
      MODEL: 'script',
      CONFIRM_POLICY: 'ask',
      MCP_SERVERS: JSON.stringify([{ name: SERVER, url, timeout_ms: 10_000 }]),
      LOG_LEVEL: process.env.EDGELOOP_LOG_LEVEL ?? 'warn',
    },
    outbound,
    onLog: (line) => console.error(line),
  })
  try {
    const api = async (path: string, body?: unknown): Promise<any> => {
      const res = await runtime.fetch(path, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      const json = await res.json()
      if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`)
      return json
    }
    const task = scriptFor(scenario)
    const { id } = (await api('/v1/runs', { task })) as RunView
    console.error(`run ${id}: ${task}`)
    const answered = new Set<string>()
    for (;;) {
      const view = (await api(`/v1/runs/${id}`)) as RunView
      if (TERMINAL.has(view.status)) {
        const trace = await api(`/v1/runs/${id}/trace`)
        console.log(JSON.stringify(trace, null, 2))
        return view.status === 'succeeded' ? 0 : 1
      }
      for (const p of view.pendingApprovals ?? []) {
        if (answered.has(p.argsHash)) continue
        answered.add(p.argsHash)
        // A server's question: accepted with nothing filled in, so its defaults apply.
        if (p.kind === 'question') {
          await api(`/v1/runs/${id}/questions/${p.callId}`, {
            question_hash: p.argsHash,
            answer: {},
          })
          continue
        }
        await api(`/v1/runs/${id}/approvals/${p.callId}`, {
          decision: 'approve',
          args_hash: p.argsHash,
        })
      }
      await sleep(50)
    }
  } finally {
    await runtime.stop()
    await storage.remove()
  }
}

process.exitCode = await main()
