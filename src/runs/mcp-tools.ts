/**
 * A run's MCP tools, frozen when it starts. The request only names what the run may use
 * (`<server>__<tool>` or `<server>__*`, kept in its RunInfo); its first slice, before the first
 * model call, asks the servers for their tool lists and stores them beside the run, and the run's
 * tools become the real names. Every later slice (after an eviction, a crash, a redeploy) builds
 * the same tools from that record, whatever the servers list by then.
 */
import type { ServiceConfig } from '../config'
import { READ_OBSERVATION } from '../kernel/read-observation'
import type { RunState } from '../kernel/state'
import type { Tool } from '../kernel/tool'
import { KNOWN_TOOLS } from '../../tools/catalog'
import {
  allToolsOf,
  connectionOwner,
  freezeMcpTools,
  McpSessions,
  frozenToolNames,
  mcpTools,
  type FrozenMcpServer,
  type McpServerConfig,
  type McpSessionAuth,
} from '../mcp/index'
import { redactJson } from '../security/redact'
import type { SkippedTool } from './api-result'
import { logEvent, type LogEnv } from './log'
import type { RunStorage } from './storage'

const KEY = 'mcp_tools'

/** A readiness check waits no longer than this for a server's list. */
const READINESS_WAIT_MS = 5_000

/** Names no MCP server may take: every catalog tool (enabled or not) and read_observation. */
export function reservedToolNames(config: Pick<ServiceConfig, 'enabledTools'>): Set<string> {
  return new Set([...KNOWN_TOOLS, ...config.enabledTools, READ_OBSERVATION])
}

/**
 * The run with its MCP tools' real names among its tools. Their lists are fetched once, when no
 * record is stored yet (the run's first slice), in the slice's `sessions`; a server that is down
 * is recorded as such, and its tools answer why.
 */
export async function withRunMcpTools(
  env: LogEnv,
  storage: RunStorage,
  state: RunState,
  servers: readonly McpServerConfig[],
  asked: readonly string[] | undefined,
  sessions: McpSessions,
  reserved: ReadonlySet<string>,
): Promise<RunState> {
  if (!asked?.length) return state
  let frozen = storage.getValue<FrozenMcpServer[]>(KEY)
  if (frozen === undefined) {
    // A run cancelled before it took a step needs no tools.
    if (state.cancelRequested || state.steps.length) return state
    const protocol = state.protocolSetting
    // What a server lists (descriptions, schemas) and what its failure said are its words:
    // stored, shown to the model and in the trace only with secrets taken out.
    frozen = redactJson(await freezeMcpTools(servers, asked, protocol, sessions, { reserved }))
    storage.setValue(KEY, frozen)
    const level = frozen.some((f) => f.error !== undefined || f.skipped) ? 'warn' : 'info'
    logEvent(
      env,
      'mcp_tools_frozen',
      {
        runId: state.id,
        servers: frozen.map((f) => ({
          server: f.server,
          tools: f.tools.length,
          ...(f.error !== undefined ? { error: f.error } : {}),
          ...(f.missing ? { missing: f.missing } : {}),
          ...(f.skipped ? { skipped: f.skipped } : {}),
        })),
      },
      level,
    )
  }
  const added = frozenToolNames(frozen).filter((n) => !state.tools.includes(n))
  return added.length ? { ...state, tools: [...state.tools, ...added] } : state
}

/**
 * The run's MCP tools, built from its frozen lists (none before the first slice froze them);
 * their calls share `sessions`, which the run's object ends at the end of every slice.
 */
export function runMcpTools(
  env: LogEnv,
  storage: RunStorage,
  runId: string,
  servers: readonly McpServerConfig[],
  sessions: McpSessions,
  reserved: ReadonlySet<string>,
): Tool[] {
  const frozen = storage.getValue<FrozenMcpServer[]>(KEY)
  if (!frozen) return []
  const { tools, skipped } = mcpTools(frozen, servers, sessions, reserved)
  if (skipped.length) logEvent(env, 'mcp_tools_skipped', { runId, skipped }, 'warn')
  return tools
}

/**
 * What the run's trace says about MCP tools it does not have: each one left out when its list
 * was frozen (listed twice, a taken name, a name or schema the model cannot be sent), and each
 * server that could not be asked (its tools are not in the run).
 */
export function skippedMcpTools(storage: RunStorage): SkippedTool[] {
  const frozen = storage.getValue<FrozenMcpServer[]>(KEY)
  if (!frozen) return []
  return frozen.flatMap((f) => [
    ...(f.error !== undefined ? [{ tool: allToolsOf(f.server), reason: unreachable(f) }] : []),
    ...(f.skipped ?? []).map(splitSkipped),
  ])
}

/**
 * Readiness warnings for the MCP servers: each is asked for its list (every server at once, at
 * most READINESS_WAIT_MS each, in sessions ended at once) and what a run starting now would
 * leave out is said: a server that cannot be reached, a tool listed twice, a taken name.
 */
export async function mcpReadinessWarnings(
  config: ServiceConfig,
  auth?: McpSessionAuth,
): Promise<string[]> {
  // A per-person server answers per person: there is no one connection to check here.
  const servers = config.mcpServers.filter((s) => connectionOwner(s, null) !== null)
  if (!servers.length) return []
  const everything = servers.map((s) => allToolsOf(s.name))
  const limits = { reserved: reservedToolNames(config), maxWaitMs: READINESS_WAIT_MS }
  const sessions = new McpSessions(auth)
  let frozen: FrozenMcpServer[]
  try {
    frozen = await freezeMcpTools(servers, everything, 'auto', sessions, limits)
  } finally {
    await sessions.close()
  }
  return frozen.flatMap((f) => [
    ...(f.error !== undefined ? [`MCP_SERVERS: ${unreachable(f)}`] : []),
    ...(f.skipped ?? []).map((s) => `MCP_SERVERS: ${s}: left out of runs`),
  ])
}

/** Why a server's tools are not in a run: it refused (needs a connection, a scope), or no answer. */
function unreachable(f: FrozenMcpServer): string {
  if (f.access === 'needs_connection') {
    return `the ${f.server} MCP server needs a connection (${f.error})`
  }
  if (f.access === 'forbidden' || f.access === 'needs_scope') {
    return `the ${f.server} MCP server is forbidden (${f.error})`
  }
  return `the ${f.server} MCP server could not be reached (${f.error}); runs go on without its tools`
}

/** A recorded `<tool>: <reason>` (tool names never hold ": "). */
function splitSkipped(entry: string): SkippedTool {
  const at = entry.indexOf(': ')
  return at < 0
    ? { tool: entry, reason: 'left out' }
    : { tool: entry.slice(0, at), reason: entry.slice(at + 2) }
}
