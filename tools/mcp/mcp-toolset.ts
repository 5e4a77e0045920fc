/**
 * MCP servers as a tool source. When a run starts, the tool lists of the servers it may use are
 * fetched once and frozen into its stored state (`freezeMcpTools`); every later slice builds the
 * same tools from that record (`mcpTools`), so a run never sees its tools change.
 */
import type { Tool } from '../../src/kernel/tool'
import { listMcpTools, type ListedMcpTool } from './mcp-client'
import { MCP_NAME_SEPARATOR, type McpServerConfig } from './mcp-servers'
import { buildMcpTool, mcpToolName, unavailableMcpTool } from './mcp-tool'

/** One server's tools as the run saw them when it started; `error` when it could not be asked. */
export interface FrozenMcpServer {
  server: string
  tools: ListedMcpTool[]
  error?: string
}

/** What a run may use from a server: all its tools (`<server>__*`) or the ones named. */
interface Selection {
  all: boolean
  names: Set<string>
}

/** The run tool name that stands for "every tool of this server". */
export function allToolsOf(server: string): string {
  return `${server}${MCP_NAME_SEPARATOR}*`
}

/** Whether `name` is one of a configured server's tools, or all of them. */
export function isMcpToolName(servers: readonly McpServerConfig[], name: string): boolean {
  return servers.some((s) => name.startsWith(`${s.name}${MCP_NAME_SEPARATOR}`))
}

/** Asks every server the run may use for its tools, at once; a server that fails is recorded. */
export async function freezeMcpTools(
  servers: readonly McpServerConfig[],
  runTools: readonly string[],
): Promise<FrozenMcpServer[]> {
  const used = servers.filter((s) => selectionOf(s.name, runTools))
  return Promise.all(
    used.map(async (server): Promise<FrozenMcpServer> => {
      const pick = selectionOf(server.name, runTools)!
      try {
        const listed = await listMcpTools(server, AbortSignal.timeout(server.timeoutMs))
        const tools = listed.filter(
          (t) =>
            (server.tools === undefined || server.tools.includes(t.name)) &&
            (pick.all || pick.names.has(t.name)),
        )
        return { server: server.name, tools }
      } catch (err) {
        return { server: server.name, tools: [], error: describeFailure(err, server) }
      }
    }),
  )
}

/**
 * The frozen tools as kernel tools. A tool whose name or schema cannot be used is left out and
 * reported in `skipped`; a server that was down stands in as tools that say so.
 */
export function mcpTools(
  frozen: readonly FrozenMcpServer[],
  servers: readonly McpServerConfig[],
  runTools: readonly string[],
): { tools: Tool[]; skipped: string[] } {
  const tools: Tool[] = []
  const skipped: string[] = []
  for (const record of frozen) {
    const server = servers.find((s) => s.name === record.server)
    if (!server) {
      skipped.push(`${record.server}: no longer in MCP_SERVERS`)
      continue
    }
    if (record.error !== undefined) {
      const pick = selectionOf(server.name, runTools)
      const names = [...(pick?.names ?? [])].map((n) => mcpToolName(server.name, n))
      if (pick?.all) names.unshift(mcpToolName(server.name, 'unavailable'))
      for (const name of names) tools.push(unavailableMcpTool(server.name, name, record.error))
      continue
    }
    for (const listed of record.tools) {
      try {
        tools.push(buildMcpTool(server, listed))
      } catch (err) {
        skipped.push(`${mcpToolName(server.name, listed.name)}: ${(err as Error).message}`)
      }
    }
  }
  return { tools, skipped }
}

function selectionOf(server: string, runTools: readonly string[]): Selection | undefined {
  const prefix = `${server}${MCP_NAME_SEPARATOR}`
  const mine = runTools.filter((t) => t.startsWith(prefix)).map((t) => t.slice(prefix.length))
  if (mine.length === 0) return undefined
  return { all: mine.includes('*'), names: new Set(mine.filter((n) => n !== '*')) }
}

function describeFailure(err: unknown, server: McpServerConfig): string {
  const e = err as Error & { code?: unknown }
  if (e?.name === 'TimeoutError') return `no answer from ${server.url} within ${server.timeoutMs}ms`
  // The SDK's transport errors carry the HTTP status as `code`.
  const status = typeof e?.code === 'number' && e.code >= 100 ? `HTTP ${e.code}: ` : ''
  return `${status}${e?.message ?? String(err)}`
}
