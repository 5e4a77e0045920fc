import type { Tool } from '../src/kernel/tool'
import { calculator } from './calculator'
import { queryMetrics, readRepoFile, rollbackDeploy, searchLogs } from './demo'
import { createHttpGetTool } from './http-get'
import { createHttpPostTool } from './http-post'

/** What the catalog needs to build tools: which ones, and the hosts the HTTP tools may reach. */
export interface ToolsetConfig {
  enabled: string[]
  httpAllowlist: string[]
  /** Every allowlisted host deduplicates POSTs by Idempotency-Key (HTTP_POST_IDEMPOTENT). */
  httpPostIdempotent?: boolean
}

// Factories, so that a tool is only built (and its options checked) when it is enabled:
// an empty allowlist is an error for http_get, not for a deployment that doesn't use it.
const CATALOG: Record<string, (config: ToolsetConfig) => Tool> = {
  calculator: () => calculator,
  http_get: (c) => createHttpGetTool({ allowlist: c.httpAllowlist }),
  http_post: (c) =>
    createHttpPostTool({ allowlist: c.httpAllowlist, idempotent: c.httpPostIdempotent ?? false }),
  query_metrics: () => queryMetrics,
  search_logs: () => searchLogs,
  read_repo_file: () => readRepoFile,
  rollback_deploy: () => rollbackDeploy,
}

/** Every tool name `buildToolset` knows. */
export const KNOWN_TOOLS: readonly string[] = Object.freeze(Object.keys(CATALOG))

/** The enabled tools, in the order named (duplicates dropped); unknown names are a TypeError. */
export function buildToolset(config: ToolsetConfig): Tool[] {
  const names = [...new Set(config.enabled)]
  const unknown = names.filter((n) => !Object.hasOwn(CATALOG, n))
  if (unknown.length) {
    throw new TypeError(
      `unknown tool${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')} ` +
        `in the enabled list; known tools: ${KNOWN_TOOLS.join(', ')}`,
    )
  }
  return names.map((n) => CATALOG[n]!(config))
}

/** A comma-separated tool list (e.g. the ENABLED_TOOLS var) as names: trimmed, empties dropped. */
export function parseToolList(csv: string | undefined): string[] {
  return (csv ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
}
