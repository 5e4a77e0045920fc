import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type CreateTaskResult,
  type JSONRPCRequest,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js'
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker'
import { isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js'
import { loadConfig, type EnvRecord } from '../../config'
import { eventStreamLimits } from '../../config/event-streams'
import { mcpServing } from '../../config/mcp-serving'
import type { Env } from '../../env'
import { idFromKey, startRun, StartError } from '../../runs/start'
import { runStub, type RunView } from '../../runs/types'
import { agentTool } from './agent-tools'
import { answerOffer, itemOffers } from './elicitation'
import { callArguments } from './call-arguments'
import { CallEvents, changeNotifications, logNotification, RESUME_RETRY_MS } from './call-events'
import { followRun } from './follow-run'
import { holdServedCall } from '../../runs/index/hold-served-call'
import type { McpCaller } from './mcp-caller'
import { checkSession, messageOf, sessionFor, sessionKey } from './mcp-sessions'
import { callResultOf, taskOf } from './run-result'
import { RunTaskStore } from './run-tasks'
import { isOfferId, type McpSession } from './signed-ids'

/** How often a client is told to poll a task (tasks/get), and how often tasks/result looks. */
const TASK_POLL_MS = 1_000

/**
 * Answers one POST to `/mcp` (docs/serving.md#mcp): the SDK's server and its Web-standard
 * Streamable HTTP transport, made per request (a Worker holds nothing between requests: a
 * session is a signed id, a task's state is its run's). Every agent of the deployment is a tool;
 * a call starts a run as `POST /v1/runs` does, with the caller as requester. `raw` is the body.
 */
export async function serveMcp(
  env: Env,
  request: Request,
  caller: McpCaller,
  raw: string,
): Promise<Response> {
  const checked = await checkSession(env, request, caller)
  if ('refusal' in checked) return checked.refusal
  // The SDK answers an empty array 202 with no body, as if it held only notifications; JSON-RPC
  // 2.0 makes it an Invalid Request, which tells a careless client what it sent.
  if (/^\s*\[\s*\]\s*$/.test(raw)) {
    return Response.json(
      {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: 'Invalid Request: the body is an empty array; send one JSON-RPC message',
        },
      },
      { status: 400 },
    )
  }
  const message = messageOf(raw)
  const key = sessionKey(env)
  // The client's answer to an elicitation this server sent (elicitation.ts): no SDK server knows it.
  if (key && message && !('method' in message) && 'id' in message && isOfferId(message.id)) {
    return answerOffer(env, key, caller, message as typeof message & { id: string })
  }
  const resumable = await resumableCall(env, caller, checked.session, message)
  const offers = itemOffers(key, caller, checked.session)
  const server = mcpServer(env, caller, { resumable, offers })
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    ...(resumable ? { eventStore: resumable.events, retryInterval: RESUME_RETRY_MS } : {}),
  })
  await server.connect(transport)
  const response = await transport.handleRequest(
    new Request(request.url, { method: 'POST', headers: request.headers, body: raw }),
  )
  const session = response.ok ? await sessionFor(env, caller, message) : null
  if (!session) return response
  const opened = new Response(response.body, response)
  opened.headers.set('Mcp-Session-Id', session)
  return opened
}

/**
 * A tools/call without a task, in a session: its stream can be resumed. Its run's id is chosen
 * now (an idempotency key only this call has), so that even the priming event's id names it.
 */
interface ResumableCall {
  events: CallEvents
  idempotencyKey: string
}

async function resumableCall(
  env: Env,
  caller: McpCaller,
  session: McpSession | null,
  message: ReturnType<typeof messageOf>,
): Promise<ResumableCall | null> {
  const key = sessionKey(env)
  if (!key || !session || !message || !isJSONRPCRequest(message)) return null
  if (message.method !== 'tools/call' || message.params?.task !== undefined) return null
  const idempotencyKey = `mcp-call:${caller.name}:${crypto.randomUUID()}`
  const token = (message.params?._meta as { progressToken?: unknown } | undefined)?.progressToken
  const progressToken = typeof token === 'string' || typeof token === 'number' ? token : undefined
  const events = new CallEvents(key, caller.name, {
    run: await idFromKey(idempotencyKey),
    seq: 0,
    request: message.id,
    ...(progressToken !== undefined ? { progressToken } : {}),
    progress: 0,
  })
  return { events, idempotencyKey }
}

/** What a call's stream does beyond answering: resumable, and offering pending items. */
interface CallStreaming {
  resumable: ResumableCall | null
  offers: ReturnType<typeof itemOffers>
}

function mcpServer(env: Env, caller: McpCaller, streaming: CallStreaming): Server {
  const server = new Server(
    { name: 'edgeloop', title: 'edgeloop agents', version: '0.1.0' },
    {
      capabilities: {
        tools: { listChanged: false },
        logging: {},
        tasks: { cancel: {}, requests: { tools: { call: {} } } },
      },
      instructions:
        'Each tool is an agent of this edgeloop deployment. A call starts a run; a run may wait for a person to approve a side effect (in Slack, the console or the API). Call with a task (params.task) to follow a long run with tasks/get and tasks/result.',
      taskStore: new RunTaskStore(env, caller, TASK_POLL_MS),
      defaultTaskPollInterval: TASK_POLL_MS,
      // Workers forbid the code generation of the SDK's default validator (docs/decisions.md#ajv).
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    },
  )
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: loadConfig(env).agents.map(agentTool),
  }))
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    callAgent(env, caller, request.params, extra, streaming, (offer) =>
      server.transport!.send(offer, { relatedRequestId: extra.requestId }),
    ),
  )
  return server
}

interface CallExtra {
  signal: AbortSignal
  _meta?: { progressToken?: string | number }
  sendNotification: (notification: ServerNotification) => Promise<void>
  /** Given by the transport when the stream can be resumed (an event store, 2025-11-25). */
  closeSSEStream?: () => void
}

/** tools/call: starts the agent's run; answers its task, or waits for its answer. */
async function callAgent(
  env: Env,
  caller: McpCaller,
  params: { name: string; arguments?: Record<string, unknown>; task?: unknown },
  extra: CallExtra,
  streaming: CallStreaming,
  sendOffer: (offer: JSONRPCRequest) => Promise<void>,
): Promise<CallToolResult | CreateTaskResult> {
  const { resumable } = streaming
  const agents = loadConfig(env).agents
  const agent = agents.find((a) => a.name === params.name)
  if (!agent) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `unknown tool "${String(params.name).slice(0, 100)}"; the agents offered are ${agents.map((a) => a.name).join(', ')} (tools/list)`,
      { code: 'unknown_tool' },
    )
  }
  const args = callArguments(agent.name, params.arguments)
  if (args.conversation !== undefined) await checkConversation(env, caller, args.conversation)
  // A call without a task waits on this request: it needs a place first, before any run starts.
  const release = params.task === undefined ? await holdWaitingCall(env, caller) : undefined
  try {
    let view: RunView
    try {
      ;({ view } = await startRun(env, {
        task: args.task,
        requestedBy: caller.name,
        owner: caller.name,
        agent: agent.name,
        ...(args.conversation !== undefined ? { continue: args.conversation } : {}),
        ...(resumable ? { idempotencyKey: resumable.idempotencyKey } : {}),
      }))
    } catch (err) {
      if (err instanceof StartError) {
        throw new McpError(ErrorCode.InvalidParams, err.message, {
          code: err.code,
          details: err.details,
        })
      }
      throw err
    }
    await extra.sendNotification(
      logNotification(`started run ${view.id} of agent ${agent.name}`, view.id),
    )
    if (params.task !== undefined) return { task: taskOf(view, TASK_POLL_MS) }
    return await waitForAnswer(env, caller, view, extra, streaming, sendOffer)
  } finally {
    release?.()
  }
}

/**
 * A place among the token's waiting calls (SERVED_CALLS_PER_TOKEN, docs/limits.md#served-calls),
 * freed by the function it answers; beyond the limit, an error that says to call with a task.
 */
async function holdWaitingCall(env: Env, caller: McpCaller): Promise<() => void> {
  const limit = eventStreamLimits(env as unknown as EnvRecord).servedPerToken
  const held = await holdServedCall(env.RUN_LIST, caller.name, limit)
  if (held.ok) return held.release
  throw new McpError(
    ErrorCode.InvalidRequest,
    `token "${caller.name}" already has ${held.limit} calls waiting at once (${held.setting} = ${held.limit}); nothing was started. Call with a task (params.task) and poll tasks/get, or retry once one has ended`,
    { code: 'too_many_waiting_calls', setting: held.setting, limit: held.limit },
  )
}

/**
 * A call without a task: the run's answer on this request, if it comes within MCP_WAIT_SECONDS.
 * A resumable call's stream is closed then instead (SSE polling): the client comes back with
 * GET and the last event id, and resume-call.ts follows the run from where this stream stood.
 */
async function waitForAnswer(
  env: Env,
  caller: McpCaller,
  started: RunView,
  extra: CallExtra,
  { resumable, offers }: CallStreaming,
  sendOffer: (offer: JSONRPCRequest) => Promise<void>,
): Promise<CallToolResult> {
  const serving = mcpServing(env as unknown as EnvRecord)
  const token = extra._meta?.progressToken
  let progress = 0
  const cursor = resumable?.events.cursor
  const { view: ended } = await followRun(runStub(env.RUNS, started.id), started.id, {
    holder: caller.name,
    limits: eventStreamLimits(env as unknown as EnvRecord),
    waitMs: serving.waitMs,
    signal: extra.signal,
    onChange: async (view, seq) => {
      if (token !== undefined) progress++
      // Each event's id carries where the stream stands once it is sent.
      if (cursor) Object.assign(cursor, { seq, progress })
      for (const n of changeNotifications(view, token, progress)) await extra.sendNotification(n)
      for (const offer of offers ? await offers(view) : []) await sendOffer(offer)
    },
  })
  if (ended) return callResultOf(env, ended)
  if (extra.closeSSEStream) {
    extra.closeSSEStream()
    // The stream is closed: this answer is never sent; the resumed stream carries the result.
    throw new McpError(ErrorCode.RequestTimeout, `run ${started.id} goes on; resume the stream`)
  }
  throw new McpError(
    ErrorCode.RequestTimeout,
    `run ${started.id} did not end within ${serving.waitMs / 1000} s (MCP_WAIT_SECONDS); it goes on. Call with a task (params.task; the server declares the tasks capability for tools/call) to follow it with tasks/get and tasks/result, or read GET /v1/runs/${started.id}`,
    { code: 'run_still_going', runId: started.id, waitSeconds: serving.waitMs / 1000 },
  )
}

/**
 * A conversation to continue must be a run the caller may read, as for `POST /v1/runs`
 * (docs/security.md#who-sees-which-runs); another token's is "not found".
 */
async function checkConversation(env: Env, caller: McpCaller, id: string): Promise<void> {
  if (!caller.scopes.includes('runs:read')) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `continuing a conversation reads its history: token "${caller.name}" needs the scope runs:read`,
      { code: 'forbidden', required: 'runs:read' },
    )
  }
  if (caller.runs !== 'own') return
  const owner = await runStub(env.RUNS, id).owner()
  const own =
    (owner.run === 'live' && owner.owner === caller.name) ||
    (owner.run === 'deleted' && owner.by === caller.name)
  if (!own) {
    throw new McpError(ErrorCode.InvalidParams, `conversation: no run ${id}`, {
      code: 'run_not_found',
    })
  }
}
