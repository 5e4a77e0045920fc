/**
 * The Worker as deployed, in workerd, for the `/mcp` tests: MODEL=script (runs follow their task,
 * docs/trying-tools.md), the demo's side effect `rollback_deploy` needing approval, and two
 * tokens limited to their own runs (alpha, beta) plus a reader. `outbound` answers what the
 * Worker sends out (Slack, when a test gives it a fake); anything else is refused.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { bundleWorker, tempStorage, WorkerRuntime } from '../worker-runtime.ts'

export const TOKENS = {
  alpha: 'mcp-alpha-token',
  beta: 'mcp-beta-token',
  reader: 'mcp-reader-token',
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

export interface McpWorker {
  runtime: WorkerRuntime
  /** `http://127.0.0.1:<port>/mcp` */
  url: URL
  /** Kills workerd and starts it again on the same storage, with `extra` settings. */
  restart: (extra: Record<string, string>) => Promise<void>
  stop: () => Promise<void>
}

/** Starts the Worker with the settings above, and `extra` over them. */
export async function startMcpWorker(
  extra: Record<string, string> = {},
  outbound: (request: Request) => Promise<Response> = refuse,
): Promise<McpWorker> {
  const worker = await bundleWorker()
  const storage = await tempStorage()
  const start = async (more: Record<string, string>) =>
    WorkerRuntime.start({
      worker,
      storage: storage.path,
      bindings: { ...(await mcpBindings()), ...more },
      outbound,
    })
  const handle: McpWorker = {
    runtime: await start(extra),
    url: new URL('http://127.0.0.1/'),
    restart: async (more) => {
      await handle.runtime.kill()
      handle.runtime = await start(more)
      handle.url = new URL('/mcp', await handle.runtime.url())
    },
    stop: async () => {
      await handle.runtime.stop()
      await storage.remove()
    },
  }
  handle.url = new URL('/mcp', await handle.runtime.url())
  return handle
}

/** The settings every test Worker here gets. */
export async function mcpBindings(): Promise<Record<string, string>> {
  return {
    API_TOKENS: JSON.stringify([
      ...(await Promise.all(
        (['alpha', 'beta'] as const).map(async (name) => ({
          name,
          sha256: await sha256(TOKENS[name]),
          scopes: ['runs:write', 'runs:read', 'approvals:write'],
          runs: 'own',
        })),
      )),
      { name: 'reader', sha256: await sha256(TOKENS.reader), scopes: ['runs:read'] },
    ]),
    MODEL: 'script',
    CONFIRM_POLICY: 'ask',
    ENABLED_TOOLS: 'calculator,rollback_deploy',
    LOG_LEVEL: 'silent',
    // Sessions and resumable call streams (docs/serving.md#sessions-and-resumption).
    MCP_SESSION_SECRET: 'mcp-session-test-secret',
  }
}

async function refuse(request: Request): Promise<Response> {
  return new Response(`no network in this test: ${request.url}`, { status: 502 })
}

/** The MCP SDK's client, connected to `/mcp` with `token`. */
export async function mcpClient(
  url: URL,
  token: string,
  capabilities: ConstructorParameters<typeof Client>[1] = {},
): Promise<Client> {
  const client = new Client({ name: 'edgeloop-test', version: '1.0.0' }, capabilities)
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  })
  await client.connect(transport)
  return client
}
