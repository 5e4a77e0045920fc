/**
 * The MCP sessions of one slice (one Worker or Durable Object invocation, or one `react()` run):
 * at most one per server, opened on first use, shared by the slice's tool listing and calls, and
 * ended when the slice ends. None outlives its slice: a run's next slice may be hours later, in
 * another isolate, and a session's requests belong to the invocation that made them.
 */
import type { McpAsker } from './mcp-elicitation'
import type { HeldMcpCalls } from './mcp-held-calls'
import { openMcpSession, type McpSession, type McpSessionAuth } from './mcp-session'
import type { McpServerConfig } from './mcp-servers'

interface Entry {
  opening: Promise<McpSession>
  session?: McpSession
}

export class McpSessions {
  /** Who answers the servers' questions; without it the sessions declare no elicitation. */
  readonly #ask: McpAsker | undefined
  /**
   * A run's sessions: calls whose server asked a question are held open here while a person
   * answers, and their sessions outlive the slice (mcp-held-calls.ts).
   */
  readonly held: HeldMcpCalls | undefined
  readonly #byServer = new Map<string, Entry>()
  readonly #auth: () => Promise<McpSessionAuth | undefined>
  /** Dropped sessions the server may still hold: ended with the slice's. */
  #broken = new Set<McpSession>()

  /**
   * `auth`: where OAuth connections live and whose they are (servers with `auth` need it), or
   * how to find out when a session first needs it. `ask`: who answers the servers' questions
   * at once; `hold`: where calls wait for a person instead (a run's, mcp-question-call.ts).
   */
  constructor(
    auth?: McpSessionAuth | (() => Promise<McpSessionAuth | undefined>),
    options: { ask?: McpAsker; hold?: HeldMcpCalls } = {},
  ) {
    this.#auth = typeof auth === 'function' ? auth : () => Promise.resolve(auth)
    this.held = options.hold
    this.#ask = options.hold?.ask ?? options.ask
  }

  /** The server's session in this slice, opened (the initialize handshake) on first use. */
  session(server: McpServerConfig): Promise<McpSession> {
    const known = this.#byServer.get(server.name)
    if (known) return known.opening
    const entry: Entry = {
      opening: server.auth
        ? this.#auth().then((auth) => openMcpSession(server, auth, this.#ask))
        : openMcpSession(server, undefined, this.#ask),
    }
    this.#byServer.set(server.name, entry)
    entry.opening.then(
      (session) => (entry.session = session),
      // A session that could not be opened is not kept: the next call tries again.
      () => this.#forget(server.name, entry),
    )
    return entry.opening
  }

  /**
   * Forgets a session that failed, so the server's next call opens a new one. One the server
   * says it ended is closed at once; one whose connection broke may still be alive there, so it
   * gets its DELETE with the others when the slice ends.
   */
  drop(server: McpServerConfig, session: McpSession, serverEnded: boolean): void {
    const entry = this.#byServer.get(server.name)
    if (entry?.session === session) this.#forget(server.name, entry)
    if (serverEnded) void session.abandon()
    else this.#broken.add(session)
  }

  /**
   * Ends every session of the slice (each with its DELETE); the next use opens new ones. A
   * session with a call held open on a question stays, for the slice that takes the answer.
   */
  async close(): Promise<void> {
    const entries: Entry[] = []
    for (const [server, entry] of this.#byServer) {
      if (this.held?.holds(server)) continue
      entries.push(entry)
      this.#byServer.delete(server)
    }
    const broken = this.#broken
    this.#broken = new Set()
    const ending = entries.map((e) =>
      e.opening.then(
        (s) => s.end(),
        () => {},
      ),
    )
    await Promise.all([...ending, ...[...broken].map((s) => s.end())])
  }

  #forget(server: string, entry: Entry): void {
    if (this.#byServer.get(server) === entry) this.#byServer.delete(server)
  }
}

/**
 * Runs `use` with the given sessions, or with sessions of its own that end when it is done (a
 * caller with no slice to share them: one operation, one session).
 */
export async function withMcpSessions<T>(
  sessions: McpSessions | undefined,
  use: (sessions: McpSessions) => Promise<T>,
): Promise<T> {
  if (sessions) return use(sessions)
  const own = new McpSessions()
  try {
    return await use(own)
  } finally {
    await own.close()
  }
}
