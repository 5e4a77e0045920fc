/**
 * MCP servers as a tool source. When a run starts, the tool lists of the servers it may use are
 * fetched once and frozen into its stored state (`freezeMcpTools`), under their real names
 * (`<server>__<tool>`); every later slice builds the same tools from that record (`mcpTools`),
 * so a run never sees its tools change.
 */
import { NATIVE_TOOL_NAME_PATTERN, TOOL_NAME_PATTERN } from '../kernel/names'
import type { Tool } from '../kernel/tool'
import { listMcpTools, type ListedMcpTool } from './mcp-client'
import { MCP_NAME_SEPARATOR, type McpServerConfig } from './mcp-servers'
import type { McpSessions } from './mcp-sessions'
import { McpAccessRefused, McpConnectionNeeded } from './oauth/connection-needed'
import {
  buildMcpTool,
  connectableMcpTool,
  mcpToolName,
  removedMcpTool,
  unavailableMcpTool,
} from './mcp-tool'

/** One server's tools as the run saw them when it started. */
export interface FrozenMcpServer {
  server: string
  /** The tools the run may use, as the server listed them. */
  tools: ListedMcpTool[]
  /** Why the server could not be asked; then `unavailable` names the tools that say so. */
  error?: string
  /**
   * The server answered, and refused: it needs a connection (HTTP 401, no grant), more scope
   * than a person's grant holds (HTTP 403 `insufficient_scope`, a new grant helps), or it is
   * forbidden (another 403: no grant helps). Absent when it could not be reached at all.
   */
  access?: 'needs_connection' | 'needs_scope' | 'forbidden'
  /** The server's own names of the stand-ins for a server that could not be asked. */
  unavailable?: string[]
  /** Asked for by name, but not in the server's list: they answer with an error. */
  missing?: string[]
  /** Listed, but left out of the run, with why (a name the model cannot be sent, a bad schema). */
  skipped?: string[]
}

/** What a run may use from a server: all its tools (`<server>__*`) or the ones named. */
interface Selection {
  all: boolean
  names: string[]
}

/** The name a run asks for to mean "every tool of this server". */
export function allToolsOf(server: string): string {
  return `${server}${MCP_NAME_SEPARATOR}*`
}

/** Whether `name` is one of a configured server's tools, or all of them. */
export function isMcpToolName(servers: readonly McpServerConfig[], name: string): boolean {
  return servers.some((s) => name.startsWith(`${s.name}${MCP_NAME_SEPARATOR}`))
}

/** What else `freezeMcpTools` must respect besides the servers' lists. */
export interface FreezeLimits {
  /** Names that are not the servers' to take (built-in and one-file tools): refused. */
  reserved?: Iterable<string>
  /** Wait at most this long for a server's list, whatever its timeout_ms (readiness checks). */
  maxWaitMs?: number
}

/**
 * Asks every server the run may use for its tools, at once, in the slice's `sessions` (the calls
 * that follow reuse them). A server that fails is recorded with the reason; a tool whose name
 * cannot be offered (too long, or outside what the chat-completions API takes when the run may
 * use it) or whose schema cannot be read is left out and recorded. Nothing a server lists can
 * fail the run: a name listed twice, or already taken (a reserved name, or another server's
 * tool of the same full name), is left out and recorded too; the first one listed wins.
 */
export async function freezeMcpTools(
  servers: readonly McpServerConfig[],
  selection: readonly string[],
  protocol: 'auto' | 'text' | 'native',
  sessions?: McpSessions,
  limits: FreezeLimits = {},
): Promise<FrozenMcpServer[]> {
  const frozen = await listSelected(servers, selection, protocol, sessions, limits.maxWaitMs)
  return withoutTakenNames(frozen, new Set(limits.reserved ?? []))
}

async function listSelected(
  servers: readonly McpServerConfig[],
  selection: readonly string[],
  protocol: 'auto' | 'text' | 'native',
  sessions: McpSessions | undefined,
  maxWaitMs: number | undefined,
): Promise<FrozenMcpServer[]> {
  const used = servers.flatMap((s) => {
    const pick = selectionOf(s.name, selection)
    return pick ? [{ server: s, pick }] : []
  })
  const problemOf = (server: string, tool: string): string | undefined => {
    const name = mcpToolName(server, tool)
    if (!TOOL_NAME_PATTERN.test(name))
      return `${name}: not a usable tool name (${TOOL_NAME_PATTERN})`
    if (protocol !== 'text' && !NATIVE_TOOL_NAME_PATTERN.test(name)) {
      return `${name}: the chat-completions API refuses it (${NATIVE_TOOL_NAME_PATTERN}); protocol "text" takes it`
    }
    return undefined
  }
  return Promise.all(
    used.map(async ({ server, pick }): Promise<FrozenMcpServer> => {
      const skipped: string[] = []
      const usable = (tool: string) => {
        const problem = problemOf(server.name, tool)
        if (problem) skipped.push(problem)
        return problem === undefined
      }
      let listed: ListedMcpTool[]
      try {
        const waitMs = Math.min(server.timeoutMs, maxWaitMs ?? Infinity)
        listed = await listMcpTools(server, AbortSignal.timeout(waitMs), sessions)
      } catch (err) {
        const unavailable = (pick.all ? ['unavailable'] : pick.names).filter(usable)
        return {
          server: server.name,
          tools: [],
          error: describeFailure(err, server),
          ...accessOf(err),
          unavailable,
          ...some({ skipped }),
        }
      }
      const offered = listed.filter(
        (t) => server.tools === undefined || server.tools.includes(t.name),
      )
      const tools = offered.filter((t) => {
        if (!pick.all && !pick.names.includes(t.name)) return false
        if (!usable(t.name)) return false
        try {
          buildMcpTool(server, t)
          return true
        } catch (err) {
          skipped.push(`${mcpToolName(server.name, t.name)}: ${(err as Error).message}`)
          return false
        }
      })
      const missing = pick.names.filter((n) => !offered.some((t) => t.name === n)).filter(usable)
      return { server: server.name, tools, ...some({ missing, skipped }) }
    }),
  )
}

/**
 * The records with every name that is taken left out (and recorded as skipped): a name in
 * `reserved`, or one an earlier tool already has (the same server listing it twice, or two
 * servers whose prefixed names meet, as `a_` + `_b` and `a` + `__b` do). First come, first kept,
 * in the order of MCP_SERVERS and of each server's list, so the choice is the same every time.
 */
function withoutTakenNames(
  frozen: FrozenMcpServer[],
  reserved: ReadonlySet<string>,
): FrozenMcpServer[] {
  const owner = new Map<string, string>()
  return frozen.map((record) => {
    const skipped = [...(record.skipped ?? [])]
    const free = (tool: string): boolean => {
      const name = mcpToolName(record.server, tool)
      const why = takenBecause(name, tool, record.server, reserved, owner.get(name))
      if (why === undefined) {
        owner.set(name, record.server)
        return true
      }
      skipped.push(`${name}: ${why}`)
      return false
    }
    const tools = record.tools.filter((t) => free(t.name))
    const unavailable = record.unavailable?.filter(free)
    const missing = record.missing?.filter(free)
    const { skipped: _s, unavailable: _u, missing: _m, ...rest } = record
    const lists = some({ unavailable: unavailable ?? [], missing: missing ?? [], skipped })
    return { ...rest, tools, ...lists }
  })
}

function takenBecause(
  name: string,
  tool: string,
  server: string,
  reserved: ReadonlySet<string>,
  owner: string | undefined,
): string | undefined {
  if (reserved.has(name)) return 'the name of a built-in or one-file tool, which keeps it'
  if (owner === server) return `the ${server} MCP server lists "${tool}" twice; the first is kept`
  if (owner !== undefined)
    return `the same name as a tool of the ${owner} MCP server, which keeps it`
  return undefined
}

/** The names the frozen record gives the run's tools, in order. */
export function frozenToolNames(frozen: readonly FrozenMcpServer[]): string[] {
  return frozen.flatMap((r) =>
    [...r.tools.map((t) => t.name), ...(r.unavailable ?? []), ...(r.missing ?? [])].map((n) =>
      mcpToolName(r.server, n),
    ),
  )
}

/**
 * The frozen tools as kernel tools, one for each name `frozenToolNames` gives, in its order. A
 * server that was down, a tool that was missing, or a server no longer in MCP_SERVERS stands in
 * as tools that answer why with a tool error. Overrides are read from the current configuration:
 * a stricter one deployed while the run goes applies at once (it can never loosen). The tools'
 * calls share `sessions`, which their caller ends when its slice ends. A name in `reserved` or
 * met twice (a record frozen before names were checked, or a tool enabled since) is left out
 * and reported in `skipped`, never thrown.
 */
export function mcpTools(
  frozen: readonly FrozenMcpServer[],
  servers: readonly McpServerConfig[],
  sessions?: McpSessions,
  reserved: Iterable<string> = [],
): { tools: Tool[]; skipped: string[] } {
  const tools: Tool[] = []
  const skipped: string[] = []
  const taken = new Set(reserved)
  const add = (tool: Tool) => {
    if (taken.has(tool.name)) skipped.push(`${tool.name}: the name is taken; the first is kept`)
    else tools.push(tool)
    taken.add(tool.name)
  }
  for (const record of frozen) {
    const server = servers.find((s) => s.name === record.server)
    const name = (tool: string) => mcpToolName(record.server, tool)
    for (const listed of record.tools) {
      try {
        const tool = server
          ? buildMcpTool(server, listed, sessions)
          : removedMcpTool(record.server, listed)
        add(tool)
      } catch (err) {
        // Built once when frozen, so only a changed validator gets here: say so on each call.
        skipped.push(`${name(listed.name)}: ${(err as Error).message}`)
        const why = `has a tool whose schema cannot be read (${(err as Error).message})`
        add(unavailableMcpTool(record.server, name(listed.name), why))
      }
    }
    // A grant helps (none yet, or one with more scope): a call waits on a `connect` item.
    const connectable = record.access === 'needs_connection' || record.access === 'needs_scope'
    for (const tool of record.unavailable ?? []) {
      if (connectable && server?.auth?.kind === 'oauth') {
        add(connectableMcpTool(server, tool, sessions))
        continue
      }
      const why = record.access
        ? `refused this run when it started (${record.error})`
        : `could not be reached when this run started (${record.error})`
      add(unavailableMcpTool(record.server, name(tool), why))
    }
    for (const tool of record.missing ?? []) {
      const why = `did not list a tool "${tool}" when this run started`
      add(unavailableMcpTool(record.server, name(tool), why))
    }
  }
  return { tools, skipped }
}

function selectionOf(server: string, asked: readonly string[]): Selection | undefined {
  const prefix = `${server}${MCP_NAME_SEPARATOR}`
  const mine = asked.filter((t) => t.startsWith(prefix)).map((t) => t.slice(prefix.length))
  if (mine.length === 0) return undefined
  return { all: mine.includes('*'), names: [...new Set(mine.filter((n) => n !== '*'))] }
}

/** The non-empty lists only, so a record holds what happened and nothing else. */
function some<T extends Record<string, string[]>>(lists: T): Partial<T> {
  return Object.fromEntries(Object.entries(lists).filter(([, v]) => v.length)) as Partial<T>
}

/** Whether a failure was a refusal (401, 403) rather than no answer. */
function accessOf(err: unknown): Pick<FrozenMcpServer, 'access'> {
  if (err instanceof McpConnectionNeeded) {
    return { access: err.reason === 'insufficient_scope' ? 'needs_scope' : 'needs_connection' }
  }
  if (err instanceof McpAccessRefused) {
    return { access: err.status === 403 ? 'forbidden' : 'needs_connection' }
  }
  // The SDK's OAuthError: the authorization server refused (a client, a grant).
  if (oauthErrorCode(err)) return { access: 'needs_connection' }
  return {}
}

function oauthErrorCode(err: unknown): string | undefined {
  const code = (err as { errorCode?: unknown } | null)?.errorCode
  return typeof code === 'string' ? code : undefined
}

function describeFailure(err: unknown, server: McpServerConfig): string {
  const oauth = oauthErrorCode(err)
  if (oauth) {
    const detail = (err as Error).message
    return `its authorization server answered ${oauth}${detail && detail !== oauth ? ` (${detail})` : ''}`
  }
  const e = err as Error & { code?: unknown }
  if (e?.name === 'TimeoutError') return `no answer from ${server.url} within ${server.timeoutMs}ms`
  // The SDK's transport errors carry the HTTP status as `code`.
  const status = typeof e?.code === 'number' && e.code >= 100 ? `HTTP ${e.code}: ` : ''
  return `${status}${e?.message ?? String(err)}`
}
