import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type CreateTaskResult,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js'
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker'
import { loadConfig, type EnvRecord } from '../../config'
import { eventStreamLimits } from '../../config/event-streams'
import { mcpServing } from '../../config/mcp-serving'
import type { Env } from '../../env'
import { startRun, StartError } from '../../runs/start'
import { runStub, type RunView } from '../../runs/types'
import { agentTool } from './agent-tools'
import { callArguments } from './call-arguments'
import { followRun } from './follow-run'
import { holdServedCall } from '../../runs/index/hold-served-call'
import type { McpCaller } from './mcp-caller'
import { callResultOf, taskOf, waitingFor } from './run-result'
import { RunTaskStore } from './run-tasks'

/** How often a client is told to poll a task (tasks/get), and how often tasks/result looks. */
const TASK_POLL_MS = 1_000

/**
 * Answers one request to `/mcp` (docs/serving.md#mcp): the SDK's server and its Web-standard
 * Streamable HTTP transport, made per request (stateless: a Worker holds no session; a task's
 * state is its run's). Every agent of the deployment is a tool; a call starts a run as
 * `POST /v1/runs` does, with the caller as requester.
 */
export async function serveMcp(env: Env, request: Request, caller: McpCaller): Promise<Response> {
  const server = mcpServer(env, caller)
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined })
  await server.connect(transport)
  return transport.handleRequest(request)
}

function mcpServer(env: Env, caller: McpCaller): Server {
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
    callAgent(env, caller, request.params, extra),
  )
  return server
}

interface CallExtra {
  signal: AbortSignal
  _meta?: { progressToken?: string | number }
  sendNotification: (notification: ServerNotification) => Promise<void>
}

/** tools/call: starts the agent's run; answers its task, or waits for its answer. */
async function callAgent(
  env: Env,
  caller: McpCaller,
  params: { name: string; arguments?: Record<string, unknown>; task?: unknown },
  extra: CallExtra,
): Promise<CallToolResult | CreateTaskResult> {
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
  const hold = params.task === undefined ? await holdWaitingCall(env, caller) : undefined
  try {
    return await startAndAnswer(env, caller, agent.name, args, params, extra)
  } finally {
    hold?.()
  }
}

/** Starts the agent's run; answers its task, or its answer once it ends. */
async function startAndAnswer(
  env: Env,
  caller: McpCaller,
  agent: string,
  args: ReturnType<typeof callArguments>,
  params: { task?: unknown },
  extra: CallExtra,
): Promise<CallToolResult | CreateTaskResult> {
  let view: RunView
  try {
    ;({ view } = await startRun(env, {
      task: args.task,
      requestedBy: caller.name,
      owner: caller.name,
      agent,
      ...(args.conversation !== undefined ? { continue: args.conversation } : {}),
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
  await log(extra, `started run ${view.id} of agent ${agent}`, view.id)
  if (params.task !== undefined) return { task: taskOf(view, TASK_POLL_MS) }
  return waitForAnswer(env, caller, view, extra)
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

/** A call without a task: the run's answer on this request, if it comes within MCP_WAIT_SECONDS. */
async function waitForAnswer(
  env: Env,
  caller: McpCaller,
  started: RunView,
  extra: CallExtra,
): Promise<CallToolResult> {
  const serving = mcpServing(env as unknown as EnvRecord)
  const token = extra._meta?.progressToken
  let progress = 0
  const ended = await followRun(runStub(env.RUNS, started.id), started.id, {
    holder: caller.name,
    limits: eventStreamLimits(env as unknown as EnvRecord),
    waitMs: serving.waitMs,
    signal: extra.signal,
    onChange: async (view) => {
      const message =
        view.status === 'awaiting_approval'
          ? waitingFor(view)
          : `run ${view.id}: step ${view.stepCount}`
      if (view.status === 'awaiting_approval') await log(extra, message, view.id)
      if (token === undefined) return
      progress++
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress, message },
      })
    },
  })
  if (ended) return callResultOf(env, ended)
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

/** A log message (notifications/message) on the call's stream: what the run is doing. */
async function log(extra: CallExtra, message: string, runId: string): Promise<void> {
  await extra.sendNotification({
    method: 'notifications/message',
    params: { level: 'info', logger: 'edgeloop', data: { message, runId } },
  })
}
