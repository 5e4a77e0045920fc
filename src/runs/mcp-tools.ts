/**
 * A run's MCP tools, frozen when it starts. The request only names what the run may use
 * (`<server>__<tool>` or `<server>__*`, kept in its RunInfo); its first slice, before the first
 * model call, asks the servers for their tool lists and stores them beside the run, and the run's
 * tools become the real names. Every later slice (after an eviction, a crash, a redeploy) builds
 * the same tools from that record, whatever the servers list by then.
 */
import type { RunState } from '../kernel/state'
import type { Tool } from '../kernel/tool'
import {
  freezeMcpTools,
  frozenToolNames,
  mcpTools,
  type FrozenMcpServer,
  type McpServerConfig,
  type McpSessions,
} from '../../tools/mcp/index'
import { logEvent, type LogEnv } from './log'
import type { RunStorage } from './storage'

const KEY = 'mcp_tools'

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
): Promise<RunState> {
  if (!asked?.length) return state
  let frozen = storage.getValue<FrozenMcpServer[]>(KEY)
  if (frozen === undefined) {
    // A run cancelled before it took a step needs no tools.
    if (state.cancelRequested || state.steps.length) return state
    frozen = await freezeMcpTools(servers, asked, state.protocolSetting, sessions)
    storage.setValue(KEY, frozen)
    logEvent(env, 'mcp_tools_frozen', {
      runId: state.id,
      servers: frozen.map((f) => ({
        server: f.server,
        tools: f.tools.length,
        ...(f.error !== undefined ? { error: f.error } : {}),
        ...(f.missing ? { missing: f.missing } : {}),
        ...(f.skipped ? { skipped: f.skipped } : {}),
      })),
    })
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
): Tool[] {
  const frozen = storage.getValue<FrozenMcpServer[]>(KEY)
  if (!frozen) return []
  const { tools, skipped } = mcpTools(frozen, servers, sessions)
  if (skipped.length) logEvent(env, 'mcp_tools_skipped', { runId, skipped }, 'warn')
  return tools
}
