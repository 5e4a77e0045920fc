/**
 * A run's MCP tools, frozen when it starts: the first slice asks the servers for their tool lists
 * and stores them beside the run; every later slice (after an eviction, a crash, a redeploy)
 * builds the same tools from that record.
 */
import type { Tool } from '../kernel/tool'
import {
  freezeMcpTools,
  isMcpToolName,
  mcpTools,
  type FrozenMcpServer,
  type McpServerConfig,
} from '../../tools/mcp/index'
import { logEvent, type LogEnv } from './log'
import type { RunStorage } from './storage'

const KEY = 'mcp_tools'

/** Fetches and stores the run's MCP tool lists, once; a run that uses no server stores nothing. */
export async function freezeRunMcpTools(
  env: LogEnv,
  storage: RunStorage,
  runId: string,
  servers: readonly McpServerConfig[],
  runTools: readonly string[],
): Promise<void> {
  if (storage.getValue(KEY) !== undefined) return
  if (!runTools.some((t) => isMcpToolName(servers, t))) return
  const frozen = await freezeMcpTools(servers, runTools)
  storage.setValue(KEY, frozen)
  logEvent(env, 'mcp_tools_frozen', {
    runId,
    servers: frozen.map((f) => ({
      server: f.server,
      tools: f.tools.length,
      ...(f.error !== undefined ? { error: f.error } : {}),
    })),
  })
}

/** The run's MCP tools, built from its frozen lists (none before the first slice froze them). */
export function runMcpTools(
  env: LogEnv,
  storage: RunStorage,
  runId: string,
  servers: readonly McpServerConfig[],
  runTools: readonly string[],
): Tool[] {
  const frozen = storage.getValue<FrozenMcpServer[]>(KEY)
  if (!frozen) return []
  const { tools, skipped } = mcpTools(frozen, servers, runTools)
  if (skipped.length) logEvent(env, 'mcp_tools_skipped', { runId, skipped }, 'warn')
  return tools
}
