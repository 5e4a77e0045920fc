/**
 * The client command the MCP conformance suite (`@modelcontextprotocol/conformance`) runs for
 * each client scenario: `node test/node/mcp-conformance/client.ts <server url>`. It has the
 * Worker as deployed run in workerd with the scenario's server as its one MCP server and the
 * scripted model (scenario-settings.ts), starts a run that calls that server's tool, and plays
 * the person: it approves the side effect, answers a server's question with the defaults, and
 * grants OAuth connections the way a person does (docs/mcp.md#oauth): it asks the API for a
 * connect link and follows it in a browser (browser.ts) through the authorization server — the
 * suite's own, which approves at once — back to the Worker's callback. The suite judges what reached its servers
 * (docs/mcp.md#conformance).
 *
 * EDGELOOP_CONFORMANCE_HOST names the runner's host (host.ts), which runs the Worker with the
 * scenario's settings while this command holds its lease; without it the command starts a
 * Worker of its own (bundling it, unless EDGELOOP_WORKER_BUILD holds a bundle).
 */
import { browse } from './browser.ts'
import { SERVER, TOKEN, usesPersonGrant, type Scenario } from './scenario-settings.ts'

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled'])

interface RunView {
  id: string
  status: string
  pendingApprovals?: { callId: string; argsHash: string; kind?: string }[]
}

type Api = (path: string, body?: unknown) => Promise<any>

/** The Worker running `scenario`'s settings: its URL, and how to let it go. */
interface Lease {
  url: string
  release(): Promise<void>
}

async function workerFor(scenario: Scenario): Promise<Lease> {
  const host = process.env.EDGELOOP_CONFORMANCE_HOST
  if (!host) {
    // On its own: a Worker of its own, from this process (which then loads Miniflare).
    const { startScenarioWorker } = await import('./host.ts')
    const { bundleWorker } = await import('../worker-runtime.ts')
    const build = process.env.EDGELOOP_WORKER_BUILD
      ? JSON.parse(process.env.EDGELOOP_WORKER_BUILD)
      : await bundleWorker()
    const running = await startScenarioWorker(build, scenario, (line) => console.error(line))
    return { url: running.url, release: running.end }
  }
  const lease = new AbortController()
  const res = await fetch(`${host}/scenario`, {
    method: 'POST',
    body: JSON.stringify(scenario),
    signal: lease.signal,
  })
  if (!res.ok || !res.body) throw new Error(`the conformance host failed: ${await res.text()}`)
  // The answer's lines: the Worker's URL first, then what it logs, until the lease ends.
  const lines = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines())
  const reader = lines.getReader()
  const first = await reader.read()
  const { workerUrl } = JSON.parse(first.value ?? '{}') as { workerUrl?: string }
  if (!workerUrl) throw new Error(`the conformance host answered no Worker: ${first.value}`)
  const logged = (async () => {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      console.error((JSON.parse(value) as { log: string }).log)
    }
  })().catch(() => {})
  return {
    url: workerUrl,
    release: async () => {
      lease.abort()
      await logged
    },
  }
}

function splitLines(): TransformStream<string, string> {
  let rest = ''
  return new TransformStream({
    transform(chunk, out) {
      const parts = (rest + chunk).split('\n')
      rest = parts.pop()!
      for (const line of parts) if (line) out.enqueue(line)
    },
    flush(out) {
      if (rest) out.enqueue(rest)
    },
  })
}

/**
 * A person grants the connection: a connect link from the API (for the run's item, when one
 * waits), followed in the browser to the Worker's callback page.
 */
async function connect(api: Api, item?: { runId: string; itemId: string }): Promise<void> {
  const link = (await api(`/v1/connections/${SERVER}/link`, item ?? {})) as { url: string }
  const landing = await browse(link.url)
  console.error(`connect: ${landing.status} at ${landing.url}: ${landing.body.slice(0, 300)}`)
}

/** Starts the run and plays the person until it ends; whether it succeeded. */
async function drive(api: Api, scenario: Scenario): Promise<boolean> {
  // A person connects the server before anyone runs with it, as docs/mcp.md's steps say.
  if (usesPersonGrant(scenario)) await connect(api).catch((err) => console.error(String(err)))
  const task = scriptFor(scenario.name)
  const { id } = (await api('/v1/runs', { task })) as RunView
  console.error(`run ${id}: ${task}`)
  const answered = new Set<string>()
  for (;;) {
    const view = (await api(`/v1/runs/${id}`)) as RunView
    if (TERMINAL.has(view.status)) {
      const trace = await api(`/v1/runs/${id}/trace`)
      console.log(JSON.stringify(trace, null, 2))
      return view.status === 'succeeded'
    }
    for (const p of view.pendingApprovals ?? []) {
      if (answered.has(p.callId + p.argsHash)) continue
      answered.add(p.callId + p.argsHash)
      if (p.kind === 'connect') {
        // The run waits for a grant (none yet, or more scope): the person grants it.
        await connect(api, { runId: id, itemId: p.callId }).catch((err) =>
          console.error(String(err)),
        )
        continue
      }
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
}

async function main(): Promise<number> {
  const serverUrl = process.argv.at(-1)
  if (!serverUrl || !/^https?:\/\//.test(serverUrl)) {
    console.error('usage: node test/node/mcp-conformance/client.ts <server url>')
    return 2
  }
  const scenario: Scenario = {
    name: process.env.MCP_CONFORMANCE_SCENARIO ?? '',
    serverUrl,
    context: JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}'),
  }
  const worker = await workerFor(scenario)
  const api: Api = async (path, body) => {
    const res = await fetch(`${worker.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const json = await res.json()
    if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`)
    return json
  }
  try {
    return (await drive(api, scenario)) ? 0 : 1
  } finally {
    await worker.release()
  }
}

process.exitCode = await main()
