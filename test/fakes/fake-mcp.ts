/**
 * A real MCP server, built with the official SDK (McpServer over its web-standard Streamable
 * HTTP transport, JSON responses), answering the outbound fake in-process. It keeps sessions as
 * the spec describes (an `Mcp-Session-Id` from initialize, 404 for one it does not know, DELETE
 * to end one), or none when `stateless`. Its tools cover every policy: read-only, destructive,
 * idempotent, no annotations, and one that fails.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { EventStore } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker'
import {
  ElicitResultSchema,
  type ElicitRequestFormParams,
  type ElicitResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js'
import * as z from 'zod'
import type { FakeHandler } from './outbound'

export const FAKE_MCP_HOST = 'mcp.test'
export const FAKE_MCP_TOKEN = 'docs-mcp-token-0123'

export interface McpCall {
  tool: string
  args: Record<string, unknown>
  idempotencyKey: unknown
}

/** What `search_section` asks for: a section (an enum with a default) and a page limit. */
export const SECTION_SCHEMA: ElicitRequestFormParams['requestedSchema'] = {
  type: 'object',
  properties: {
    section: { type: 'string', enum: ['guides', 'reference', 'faq'], default: 'guides' },
    limit: { type: 'integer', minimum: 1, maximum: 50, default: 10 },
    note: { type: 'string' },
  },
  required: ['section'],
}

/** What `publish_page` asks for: the channel to publish to. */
export const CHANNEL_SCHEMA: ElicitRequestFormParams['requestedSchema'] = {
  type: 'object',
  properties: {
    channel: { type: 'string', enum: ['blog', 'changelog'] },
    notify: { type: 'boolean', default: false },
  },
  required: ['channel'],
}

/** Where `open_consent` sends the person (URL-mode elicitation). */
export const CONSENT_URL = 'https://mcp.test/consent/c-1'

export class FakeMcp {
  /** Every tools/call the server received, in order. */
  readonly calls: McpCall[] = []
  /** How many times tools/list was asked. */
  listed = 0
  /** Authorization headers of the requests. */
  readonly authorizations: (string | null)[] = []
  /** When true, the server lists one more tool (to show a run's list does not change). */
  addTool = false
  /** Tools that never answer (their calls still count). */
  readonly hanging = new Set<string>()
  /** No sessions at all: every request stands alone (set before the run starts). */
  stateless = false
  /** How many `initialize` requests came (one per session opened). */
  initializes = 0
  /** How many sessions a client ended with DELETE. */
  ended = 0
  /** Every answer the server refused, as `<JSON-RPC method or HTTP method> <status>`. */
  readonly refusals: string[] = []
  /** Every JSON-RPC method posted, `tools/call` as `tools/call <tool>`, also those answered 404. */
  readonly methods: string[] = []
  /**
   * One-shot: after answering this method (or `tools/call <tool>`), the server forgets every
   * session, as a restarted server does; their next requests get 404.
   */
  forgetSessionsAfter: string | undefined
  /** One-shot per tool: its next call runs, then the connection breaks before the answer. */
  readonly dropConnection = new Set<string>()
  /**
   * Tools appended, as they are, to every `tools/list` answer: what a careless server may list
   * (a name twice, a name another server has). They are only listed; calling one is an error.
   */
  readonly listAlso: Record<string, unknown>[] = []
  /**
   * Like listAlso, as JSON text: for what JSON.stringify cannot write (a schema nested
   * thousands of levels deep).
   */
  readonly listAlsoJson: string[] = []
  /** Tool name → the JSON text of the result its calls get instead of the server's own. */
  readonly resultJson = new Map<string, string>()
  /** When true, the server lists `purge`, hinted both read-only and destructive. */
  contradictoryHints = false
  /**
   * When true, the server lists `whoami`, which echoes the Authorization header it was sent: in
   * its text (`long: true` puts it past any truncation), or in an `isError` result (`fail`).
   */
  echoesToken = false
  /** When true, every request is refused with a careless 401 whose body echoes the header. */
  refusesEchoing = false
  /**
   * When true, every answer comes as an SSE stream (not JSON), as servers that send requests
   * during a call answer, and the server lists `search_section`, which asks the person which
   * section to search (elicitation). Set before the run starts.
   */
  streams = false
  /**
   * Tools whose call's response stream the server closes after its priming event, before it
   * answers (set before the run starts: answers then come as SSE streams the server can resume,
   * with `retry:` of `retryMs`). The answer waits in the server's event store until the client
   * resumes with a GET carrying `Last-Event-ID`.
   */
  readonly closeStreamOf = new Set<string>()
  retryMs = 300
  /** When each such stream was closed (`performance.now()`). */
  readonly streamsClosedAt: number[] = []
  /** Every GET: its `Last-Event-ID` (null for the session's own stream) and when it came. */
  readonly gets: { lastEventId: string | null; at: number }[] = []
  /** What the client answered each `elicitation/create` with, in order. */
  readonly elicitAnswers: ElicitResult[] = []
  /**
   * Every page `publish_page` published (its side effect), with the answer it got (and, when
   * asked to notify, the answer to its second question: which list).
   */
  readonly published: Record<string, unknown>[] = []
  /**
   * Checks a request's credentials instead of the fixed token: null lets it in, a Response
   * refuses it (test/fakes/fake-oauth.ts puts an OAuth resource server here).
   */
  authorize: ((req: Request) => Response | null) | undefined
  readonly #sessions = new Map<string, WebStandardStreamableHTTPServerTransport>()

  /** Sessions the server holds now (not yet ended by DELETE or forgotten). */
  get openSessions(): number {
    return this.#sessions.size
  }

  /** Forgets every session, as a restarted server does. */
  forgetSessions(): void {
    for (const transport of this.#sessions.values()) void transport.close()
    this.#sessions.clear()
  }

  readonly handler = async (req: Request): Promise<Response> => {
    this.authorizations.push(req.headers.get('authorization'))
    if (this.refusesEchoing) {
      return new Response(`invalid credentials: ${req.headers.get('authorization')}`, {
        status: 401,
      })
    }
    if (this.authorize) {
      const refused = this.authorize(req)
      if (refused) return refused
    } else if (req.headers.get('authorization') !== `Bearer ${FAKE_MCP_TOKEN}`) {
      return new Response('unauthorized', { status: 401 })
    }
    let method: string | undefined
    if (req.method === 'GET') {
      this.gets.push({ lastEventId: req.headers.get('last-event-id'), at: performance.now() })
    }
    if (req.method === 'POST') {
      const body = (await req.clone().json()) as { method?: string; params?: { name?: string } }
      method = body.method === 'tools/call' ? `tools/call ${body.params?.name}` : body.method
      if (method) this.methods.push(method)
      if (body.method === 'tools/list') this.listed++
      if (body.method === 'initialize') this.initializes++
    }
    let res = await this.#answer(req, method)
    if (res.status >= 400) this.refusals.push(`${method ?? req.method} ${res.status}`)
    if (method === 'tools/list' && res.ok && (this.listAlso.length || this.listAlsoJson.length)) {
      res = await this.#listAlso(res)
    }
    if (method !== undefined && method === this.forgetSessionsAfter) {
      this.forgetSessionsAfter = undefined
      this.forgetSessions()
    }
    const tool = method?.startsWith('tools/call ') ? method.slice('tools/call '.length) : undefined
    const result = tool === undefined ? undefined : this.resultJson.get(tool)
    if (result !== undefined && res.ok) {
      const { id } = (await res.json()) as { id: unknown }
      const text = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`
      res = new Response(text, { status: res.status, headers: res.headers })
    }
    if (tool !== undefined && this.dropConnection.delete(tool)) {
      throw new TypeError('Network connection lost.')
    }
    return res
  }

  async #listAlso(res: Response): Promise<Response> {
    const body = (await res.json()) as { result?: { tools?: unknown[] } }
    // The entries as text go where a marker string was written (JSON.stringify escapes its NUL).
    const raw = '"\\u0000raw-tools"'
    body.result?.tools?.push(
      ...this.listAlso,
      ...(this.listAlsoJson.length ? ['\u0000raw-tools'] : []),
    )
    const text = JSON.stringify(body).replace(raw, this.listAlsoJson.join(','))
    return new Response(text, { status: res.status, headers: res.headers })
  }

  async #answer(req: Request, method: string | undefined): Promise<Response> {
    if (this.stateless) return this.#connect(undefined, req)
    const id = req.headers.get('mcp-session-id')
    if (id === null) {
      if (method === 'initialize') return this.#connect(() => crypto.randomUUID(), req)
      return jsonRpcError(400, -32000, 'Bad Request: no session id; send initialize first')
    }
    const transport = this.#sessions.get(id)
    if (!transport) return jsonRpcError(404, -32001, 'Session not found')
    return transport.handleRequest(req)
  }

  async #connect(sessionId: (() => string) | undefined, req: Request): Promise<Response> {
    const transport: WebStandardStreamableHTTPServerTransport =
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: sessionId,
        enableJsonResponse: !this.streams && !this.closeStreamOf.size,
        ...(this.closeStreamOf.size
          ? { eventStore: new OrderedEventStore(), retryInterval: this.retryMs }
          : {}),
        onsessioninitialized: (id) => void this.#sessions.set(id, transport),
        onsessionclosed: (id) => {
          if (this.#sessions.delete(id)) this.ended++
        },
      })
    await this.#server().connect(transport)
    return transport.handleRequest(req)
  }

  #server(): McpServer {
    const server = new McpServer(
      { name: 'fake-docs', version: '1.0.0' },
      { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
    )
    const record = async (
      tool: string,
      args: Record<string, unknown>,
      extra: { _meta?: Record<string, unknown>; closeSSEStream?: () => void },
    ) => {
      this.calls.push({ tool, args, idempotencyKey: extra._meta?.idempotencyKey })
      if (this.hanging.has(tool)) return new Promise<never>(() => {})
      if (this.closeStreamOf.has(tool) && extra.closeSSEStream) {
        extra.closeSSEStream()
        this.streamsClosedAt.push(performance.now())
        // The answer comes after the close, so only a resumed stream carries it.
        await new Promise((r) => setTimeout(r, 20))
      }
      return undefined
    }
    server.registerTool(
      'search',
      {
        description: 'Search the docs. query: words to look for.',
        inputSchema: { query: z.string().min(1) },
        annotations: { readOnlyHint: true },
      },
      async ({ query }, extra) => {
        await record('search', { query }, extra)
        const text =
          query === 'everything' ? 'lorem ipsum dolor '.repeat(2000) : `3 pages mention "${query}"`
        return { content: [{ type: 'text', text }] }
      },
    )
    server.registerTool(
      'delete_page',
      {
        description: 'Delete a docs page for good.',
        inputSchema: { page: z.string() },
        annotations: { destructiveHint: true },
      },
      async ({ page }, extra) => {
        await record('delete_page', { page }, extra)
        return { content: [{ type: 'text', text: `deleted ${page}` }] }
      },
    )
    server.registerTool(
      'upsert_page',
      {
        description: 'Create or replace a docs page.',
        inputSchema: { page: z.string(), text: z.string() },
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      },
      async ({ page, text }, extra) => {
        await record('upsert_page', { page, text }, extra)
        return {
          content: [],
          structuredContent: { page, bytes: text.length, saved: true },
        }
      },
    )
    server.registerTool(
      'archive_page',
      { description: 'Move a page to the archive.', inputSchema: { page: z.string() } },
      async ({ page }, extra) => {
        await record('archive_page', { page }, extra)
        return { content: [{ type: 'text', text: `archived ${page}` }] }
      },
    )
    server.registerTool(
      'reindex',
      {
        description: 'Rebuild the search index.',
        inputSchema: {},
        annotations: { readOnlyHint: true },
      },
      async (_args, extra) => {
        await record('reindex', {}, extra)
        return {
          isError: true,
          content: [{ type: 'text', text: 'the index is locked by another rebuild' }],
        }
      },
    )
    server.registerTool(
      'list_pages',
      {
        description: 'List the docs pages (MCP_SERVERS overrides it to need approval).',
        inputSchema: {},
        annotations: { readOnlyHint: true },
      },
      async (_args, extra) => {
        await record('list_pages', {}, extra)
        return { content: [{ type: 'text', text: 'intro, setup, faq' }] }
      },
    )
    // A valid MCP name (dots are allowed there) that no model API takes as a function name.
    server.registerTool(
      'pages.export',
      { description: 'Export every page.', annotations: { readOnlyHint: true } },
      async () => ({ content: [{ type: 'text', text: 'exported' }] }),
    )
    if (this.streams) {
      // Asks the person during the call (elicitation/create, form mode) and answers with what
      // came; listed only when answers are streams, which a request during a call needs.
      server.registerTool(
        'search_section',
        {
          description: 'Search one section of the docs; asks which.',
          inputSchema: { query: z.string() },
          annotations: { readOnlyHint: true },
        },
        async ({ query }, extra) => {
          await record('search_section', { query }, extra)
          const answer = await extra.sendRequest(
            {
              method: 'elicitation/create',
              params: {
                message: `Which section should "${query}" be searched in?`,
                requestedSchema: SECTION_SCHEMA,
              },
            },
            ElicitResultSchema,
          )
          this.elicitAnswers.push(answer)
          const text =
            answer.action === 'accept'
              ? `searched ${JSON.stringify(answer.content)} for "${query}"`
              : `not searched: ${answer.action}`
          return { content: [{ type: 'text', text }] }
        },
      )
    }
    if (this.streams) {
      // A side effect (no annotations) that asks where to publish before it does.
      server.registerTool(
        'publish_page',
        {
          description: 'Publish a page; asks to which channel.',
          inputSchema: { page: z.string() },
        },
        async ({ page }, extra) => {
          await record('publish_page', { page }, extra)
          const answer = await extra.sendRequest(
            {
              method: 'elicitation/create',
              params: {
                message: `Publish "${page}" to which channel?`,
                requestedSchema: CHANNEL_SCHEMA,
              },
            },
            ElicitResultSchema,
          )
          this.elicitAnswers.push(answer)
          if (answer.action !== 'accept') {
            return { content: [{ type: 'text', text: `not published: ${answer.action}` }] }
          }
          // Asked to notify: a second question, which list.
          let list: ElicitResult | undefined
          if (answer.content?.notify === true) {
            list = await extra.sendRequest(
              {
                method: 'elicitation/create',
                params: {
                  message: 'Notify which list?',
                  requestedSchema: {
                    type: 'object',
                    properties: { list: { type: 'string' } },
                    required: ['list'],
                  },
                },
              },
              ElicitResultSchema,
            )
            this.elicitAnswers.push(list)
          }
          this.published.push({ page, ...answer.content, ...(list ? { list: list.content } : {}) })
          return {
            content: [{ type: 'text', text: `published ${page} to ${answer.content!.channel}` }],
          }
        },
      )
      // Sends the person to a page of its own (URL mode, 2025-11-25).
      server.registerTool(
        'open_consent',
        {
          description: 'Asks the person to consent on the server’s page.',
          annotations: { readOnlyHint: true },
        },
        async (extra) => {
          await record('open_consent', {}, extra)
          const answer = await extra.sendRequest(
            {
              method: 'elicitation/create',
              params: {
                mode: 'url',
                message: 'Consent to reading your drive',
                url: CONSENT_URL,
                elicitationId: 'c-1',
              },
            },
            ElicitResultSchema,
          )
          this.elicitAnswers.push(answer)
          return { content: [{ type: 'text', text: `consent: ${answer.action}` }] }
        },
      )
    }
    if (this.echoesToken) {
      server.registerTool(
        'whoami',
        {
          description: 'Who the server thinks you are.',
          inputSchema: { fail: z.boolean().optional(), long: z.boolean().optional() },
          annotations: { readOnlyHint: true },
        },
        async ({ fail, long }, extra) => {
          await record('whoami', { fail, long }, extra)
          const sent = this.authorizations.at(-1)
          if (fail) {
            return { isError: true, content: [{ type: 'text', text: `${sent} may not do that` }] }
          }
          const text = `${long ? 'padding '.repeat(2000) : ''}you are ${sent}`
          return { content: [{ type: 'text', text }] }
        },
      )
    }
    if (this.contradictoryHints) {
      server.registerTool(
        'purge',
        {
          description: 'Purge the cache.',
          inputSchema: {},
          annotations: { readOnlyHint: true, destructiveHint: true },
        },
        async (_args, extra) => {
          await record('purge', {}, extra)
          return { content: [{ type: 'text', text: 'purged' }] }
        },
      )
    }
    if (this.addTool) {
      server.registerTool(
        'new_tool',
        { description: 'Added after the run started.', annotations: { readOnlyHint: true } },
        async () => ({ content: [{ type: 'text', text: 'new' }] }),
      )
    }
    return server
  }
}

/**
 * The events of a session's streams, in the order they were stored, for `Last-Event-ID` replays.
 * (The SDK's example store orders by `Date.now()` and a random suffix: under workerd's clock,
 * which stands still while code runs, a stream's events can then replay out of order.)
 */
class OrderedEventStore implements EventStore {
  readonly #events: { id: string; streamId: string; message: JSONRPCMessage }[] = []

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}:${this.#events.length + 1}`
    this.#events.push({ id, streamId, message })
    return id
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.#events.find((e) => e.id === eventId)?.streamId
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const at = this.#events.findIndex((e) => e.id === lastEventId)
    if (at < 0) return ''
    const { streamId } = this.#events[at]!
    for (const e of this.#events.slice(at + 1)) {
      if (e.streamId === streamId) await send(e.id, e.message)
    }
    return streamId
  }
}

function jsonRpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status })
}

/**
 * The hosts of the MCP project's two servers (vitest.config.ts): a fresh FakeMcp as "docs", given
 * to `use`, and "down", which answers 503 to everything.
 */
export function mcpTestHosts(use: (mcp: FakeMcp) => void): Record<string, FakeHandler> {
  const mcp = new FakeMcp()
  use(mcp)
  return {
    [FAKE_MCP_HOST]: mcp.handler,
    'down.test': () => new Response('upstream connect error', { status: 503 }),
  }
}
