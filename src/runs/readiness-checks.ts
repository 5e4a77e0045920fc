/**
 * The deep readiness checks that reach outside the Worker (each MCP server asked for its list),
 * coalesced: one check in flight per deployment's settings, its result reused for
 * DEEP_CHECK_REUSE_MS, so no number of callers multiplies the traffic to the servers
 * (docs/operations.md#readiness).
 */
import type { ServiceConfig } from '../config'
import type { McpSessionAuth } from '../mcp/index'
import { mcpReadinessWarnings } from './mcp-tools'

/** How long one deep check's result answers every later caller. */
export const DEEP_CHECK_REUSE_MS = 10_000

interface Check {
  at: number
  warnings: Promise<string[]>
}

// Keyed by the MCP_SERVERS setting as written: one deployment has one, so every caller of an
// isolate shares its check. Entries past their reuse are dropped as new ones come.
const checks = new Map<string, Check>()

/** The MCP servers' readiness warnings: the check in flight or a recent one, else a new one. */
export function coalescedMcpWarnings(
  mcpServersSetting: string,
  config: ServiceConfig,
  now: number = Date.now(),
  auth?: McpSessionAuth,
): Promise<string[]> {
  for (const [key, check] of checks) if (now - check.at >= DEEP_CHECK_REUSE_MS) checks.delete(key)
  const recent = checks.get(mcpServersSetting)
  if (recent) return recent.warnings
  const warnings = mcpReadinessWarnings(config, auth)
  checks.set(mcpServersSetting, { at: now, warnings })
  // A failed check is not reused: the next caller asks again.
  warnings.catch(() => checks.delete(mcpServersSetting))
  return warnings
}
