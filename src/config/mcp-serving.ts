/**
 * How `/mcp` serves the agents (docs/serving.md#limits): how long a call without a task waits for
 * its run, which browser origins may call, and how long a session lasts. Read per request apart from the rest of the
 * configuration, as the event streams' limits are.
 */
import * as setting from '../settings/setting'
import { readSettings, type EnvRecord } from '../settings/setting'

export interface McpServing {
  /** How long a tools/call without a task holds its request open for the run's answer. */
  waitMs: number
  /** Origins (scheme://host[:port]) a browser may call `/mcp` from, beside PUBLIC_URL's. */
  allowedOrigins: string[]
  /** PUBLIC_URL's origin, if set. */
  publicOrigin: string | undefined
  /** How long an Mcp-Session-Id is honoured after its initialize. */
  sessionTtlMs: number
}

export const MCP_SERVING_SETTINGS = {
  MCP_WAIT_SECONDS: setting.number({ min: 1, max: 900, integer: true, fallback: 55 }),
  MCP_ALLOWED_ORIGINS: setting.list(),
  MCP_SESSION_TTL_SECONDS: setting.number({
    min: 60,
    max: 30 * 86_400,
    integer: true,
    fallback: 86_400,
  }),
  PUBLIC_URL: setting.httpUrl(),
}

const cache = new WeakMap<object, McpServing>()

/** The settings of `env`; throws a ConfigError naming a bad one. */
export function mcpServing(env: EnvRecord): McpServing {
  let serving = cache.get(env)
  if (!serving) {
    const s = readSettings(env, MCP_SERVING_SETTINGS)
    serving = {
      waitMs: s.MCP_WAIT_SECONDS * 1000,
      allowedOrigins: s.MCP_ALLOWED_ORIGINS.map((o) => o.replace(/\/+$/, '').toLowerCase()),
      publicOrigin: s.PUBLIC_URL ? new URL(s.PUBLIC_URL).origin : undefined,
      sessionTtlMs: s.MCP_SESSION_TTL_SECONDS * 1000,
    }
    cache.set(env, serving)
  }
  return serving
}
