/**
 * The client command the MCP conformance suite (`@modelcontextprotocol/conformance`) runs for
 * each client scenario: `node test/node/mcp-conformance/client.ts <server url>`. It starts the
 * Worker as deployed in workerd (worker-runtime.ts) with the scenario's server as its one MCP
 * server and the scripted model, starts a run that calls that server's tool, and plays the
 * person: it approves the side effect, answers a server's question with the defaults, and grants
 * OAuth connections the way a person does (docs/mcp.md#oauth): it asks the API for a connect
 * link and follows it in a browser (browser.ts) through the authorization server — the suite's
 * own, which approves at once — back to the Worker's callback. The suite judges what reached its
 * servers (docs/mcp.md#conformance).
 *
 * How each `auth/*` scenario's server is configured, as an operator would: `auth: "oauth"` with
 * PUBLIC_URL (the Worker's own local URL, where the authorization server sends the browser back)
 * and MCP_TOKEN_KEY; the scenario's pre-registered client or client credentials (the suite hands
 * them over in MCP_CONFORMANCE_CONTEXT) as the entry's `client_id` and secret settings.
 *
 * EDGELOOP_WORKER_BUILD may hold a bundle already built (the runner builds it once for every
 * scenario); without it the command bundles the Worker itself.
 */
import { createServer } from 'node:net'
import { bundleWorker, tempStorage, WorkerRuntime, type WorkerBuild } from '../worker-runtime.ts'
import { browse } from './browser.ts'

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

/** What the suite tells the client about a scenario (MCP_CONFORMANCE_CONTEXT). */
interface ScenarioContext {
  client_id?: string
  client_secret?: string
  private_key_pem?: string
  signing_algorithm?: string
}

/**
 * The scenario's server as an MCP_SERVERS entry, and the secret settings it names: client
 * credentials when the suite gives a private key or names the scenario so, a pre-registered
 * client when it gives one, else `auth: "oauth"` (the client metadata document or dynamic
 * registration, as the authorization server offers).
 */
function serverEntry(
  scenario: string,
  url: string,
  ctx: ScenarioContext,
): { entry: Record<string, unknown>; secrets: Record<string, string> } {
  const entry: Record<string, unknown> = { name: SERVER, url, timeout_ms: 10_000 }
  const secrets: Record<string, string> = {}
  if (!scenario.startsWith('auth/')) return { entry, secrets }
  const clientCredentials = scenario.startsWith('auth/client-credentials-')
  entry.auth = clientCredentials ? 'client_credentials' : 'oauth'
  if (ctx.client_id) entry.client_id = ctx.client_id
  if (ctx.client_secret) {
    entry.client_secret_secret = 'CONF_CLIENT_SECRET'
    secrets.CONF_CLIENT_SECRET = ctx.client_secret
  }
  if (ctx.private_key_pem) {
    entry.private_key_secret = 'CONF_PRIVATE_KEY'
    secrets.CONF_PRIVATE_KEY = ctx.private_key_pem
    if (ctx.signing_algorithm) entry.private_key_alg = ctx.signing_algorithm
  }
  return { entry, secrets }
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

/** A port nothing listens on now, for the Worker's own URL (PUBLIC_URL) before it starts. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled'])

interface PendingItem {
  callId: string
  argsHash: string
  kind?: string
}

interface RunView {
  id: string
  status: string
  pendingApprovals?: PendingItem[]
}

type Api = (path: string, body?: unknown) => Promise<any>

/**
 * A person grants the connection: a connect link from the API (for the run's item, when one
 * waits), followed in the browser to the Worker's callback page.
 */
async function connect(api: Api, item?: { runId: string; itemId: string }): Promise<void> {
  const link = (await api(`/v1/connections/${SERVER}/link`, item ?? {})) as { url: string }
  const landing = await browse(link.url)
  console.error(`connect: ${landing.status} at ${landing.url}: ${landing.body.slice(0, 300)}`)
}

async function main(): Promise<number> {
  const url = process.argv.at(-1)
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ''
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as ScenarioContext
  if (!url || !/^https?:\/\//.test(url)) {
    console.error('usage: node test/node/mcp-conformance/client.ts <server url>')
    return 2
  }
  const worker: WorkerBuild = process.env.EDGELOOP_WORKER_BUILD
    ? JSON.parse(process.env.EDGELOOP_WORKER_BUILD)
    : await bundleWorker()
  const storage = await tempStorage()
  const port = await freePort()
  const { entry, secrets } = serverEntry(scenario, url, context)
  const runtime = await WorkerRuntime.start({
    worker,
    storage: storage.path,
    port,
    bindings: {
      API_TOKEN: TOKEN,
      MODEL: 'script',
      CONFIRM_POLICY: 'ask',
      MCP_SERVERS: JSON.stringify([entry]),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      MCP_TOKEN_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64'),
      LOG_LEVEL: process.env.EDGELOOP_LOG_LEVEL ?? 'warn',
      ...secrets,
    },
    outbound,
    onLog: (line) => console.error(line),
  })
  try {
    const api: Api = async (path, body) => {
      const res = await runtime.fetch(path, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      const json = await res.json()
      if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`)
      return json
    }
    // A person connects the server before anyone runs with it, as docs/mcp.md's steps say.
    if (entry.auth === 'oauth') await connect(api).catch((err) => console.error(String(err)))
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
        if (answered.has(p.callId + p.argsHash)) continue
        answered.add(p.callId + p.argsHash)
        if (p.kind === 'connect') {
          // The run waits for a grant (none yet, or more scope): the person grants it.
          await connect(api, { runId: id, itemId: p.callId }).catch((err) =>
            console.error(String(err)),
          )
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
