/**
 * The recorded on-call incident demo (native protocol): order-service errors after deploy
 * v2.14.0 cut the DB pool from 50 to 10. Runs offline against the demo tools in `tools/`.
 */
import { unframeObservation } from '../kernel/tool-output'
import type { ChatMessage, ModelRequest, ModelResponse, NativeToolCall } from '../kernel/model'
import { ScriptedModel } from './scripted-model'

export const DEMO_MODEL_NAME = 'demo/scripted-incident'
/** The id of the demo's side-effecting call; its observation decides the final answer. */
export const DEMO_ROLLBACK_CALL_ID = 'call_demo_6'

function call(id: string, name: string, args: Record<string, unknown>): NativeToolCall {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } }
}

function act(text: string, toolCalls: NativeToolCall[], usage: [number, number]): ModelResponse {
  return {
    text,
    toolCalls,
    finishReason: 'tool_calls',
    usage: { promptTokens: usage[0], completionTokens: usage[1] },
    model: DEMO_MODEL_NAME,
  }
}

const TURNS: ModelResponse[] = [
  act(
    'Order errors are being reported. First I will compare the 5xx error rate of the order service with the gateway to see whether the problem is local to order.',
    [
      call('call_demo_1', 'query_metrics', {
        service: 'order',
        metric: 'error_rate',
        window_minutes: 60,
      }),
      call('call_demo_2', 'query_metrics', {
        service: 'gateway',
        metric: 'error_rate',
        window_minutes: 60,
      }),
    ],
    [412, 71],
  ),
  act(
    "The order service's error rate jumped from about 0.1% to 12% at 14:05 UTC. I will search the order service's logs for errors around that time.",
    [call('call_demo_3', 'search_logs', { service: 'order', query: 'error', limit: 20 })],
    [688, 44],
  ),
  act(
    'The logs are full of "timeout acquiring connection from pool (in use 10/10, max 10)": the DB connection pool is exhausted. I will check what changed recently: the CHANGELOG and the order service DB config.',
    [
      call('call_demo_4', 'read_repo_file', { path: 'CHANGELOG.md' }),
      call('call_demo_5', 'read_repo_file', { path: 'services/order/config/db.yaml' }),
    ],
    [1214, 63],
  ),
  act(
    'v2.14.0, deployed at 14:02 UTC, reduced the DB pool max_connections from 50 to 10; errors started at 14:05 and the pool is saturated at exactly 10. Rolling the order service back to v2.13.2 restores a pool of 50 and is the fastest safe mitigation.',
    [
      call(DEMO_ROLLBACK_CALL_ID, 'rollback_deploy', {
        service: 'order',
        to_version: 'v2.13.2',
        reason:
          'v2.14.0 reduced db pool max_connections from 50 to 10; pool exhaustion causes 12% 5xx since 14:05 UTC',
      }),
    ],
    [1987, 96],
  ),
]

const ROOT_CAUSE = `Root cause: deploy v2.14.0 of the order service (14:02 UTC) reduced the database connection pool max_connections from 50 to 10, so under normal load requests time out waiting for a connection.

Evidence:
- order 5xx error rate rose from 0.1% to 12% at 14:05 UTC, three minutes after the deploy; the gateway was checked for comparison.
- order logs: "timeout acquiring connection from pool (in use 10/10, max 10)".
- CHANGELOG.md: "v2.14.0 — reduce db pool max_connections from 50 to 10" (services/order/config/db.yaml holds the setting).`

/** The final answer, from what the rollback's observation said. */
function finalAnswer(observation: string | undefined): string {
  if (
    observation === undefined ||
    observation.startsWith('[ToolError]') ||
    observation.startsWith('[DryRun]')
  ) {
    const why = observation?.split('\n')[0] ?? 'no result was recorded'
    return `${ROOT_CAUSE}

Action taken: none. The rollback of order to v2.13.2 was NOT performed (${why}).
Recommended: raise max_connections in services/order/config/db.yaml back to 50 manually (or approve a rollback to v2.13.2), then confirm the error rate returns to about 0.1%.`
  }
  return `${ROOT_CAUSE}

Action taken: rolled the order service back from v2.14.0 to v2.13.2 (approved), restoring a pool of 50 connections.
Follow-up: watch the order error rate return to about 0.1%, and restore max_connections to 50 before re-deploying v2.14.0.`
}

function rollbackObservation(messages: ChatMessage[]): string | undefined {
  const found = messages.findLast(
    (m) => m.role === 'tool' && m.tool_call_id === DEMO_ROLLBACK_CALL_ID,
  )
  return found?.role === 'tool' ? unframeObservation(found.content) : undefined
}

/** The scripted demo: four tool-using turns, then a final answer that reflects the rollback's fate. */
export function demoScript(request: ModelRequest, turn: number): ModelResponse | undefined {
  if (turn < TURNS.length) return TURNS[turn]
  if (turn > TURNS.length) return undefined
  return {
    text: finalAnswer(rollbackObservation(request.messages)),
    finishReason: 'stop',
    usage: { promptTokens: 2436, completionTokens: 187 },
    model: DEMO_MODEL_NAME,
  }
}

/** The id of the on-call agent's call that hands the log reading to the log analyst. */
export const DEMO_DELEGATION_CALL_ID = 'call_demo_3'

/** The on-call agent's second turn: the log reading as a child run (agents/oncall.ts). */
const DELEGATING_TURN = act(
  "The order service's error rate jumped from about 0.1% to 12% at 14:05 UTC. I will ask the log analyst to read the order service's logs around that time.",
  [
    call(DEMO_DELEGATION_CALL_ID, 'ask_log_analyst', {
      task: 'Read the order service logs for errors since 14:00 UTC: the dominant error, when it began, what it points at.',
    }),
  ],
  [688, 52],
)

/** The log analyst's run (agents/log-analyst.ts): one search, then its report. */
const LOG_ANALYST_TURNS: ModelResponse[] = [
  act(
    'I will search the order service logs for errors.',
    [call('call_logs_1', 'search_logs', { service: 'order', query: 'error', limit: 20 })],
    [301, 38],
  ),
  {
    text: 'Since 14:05 UTC nearly every order error is "timeout acquiring connection from pool (in use 10/10, max 10)": the database connection pool is exhausted at a maximum of 10 connections. Nothing in the logs points at the database itself; the limit of 10 is the thing to check.',
    finishReason: 'stop',
    usage: { promptTokens: 918, completionTokens: 71 },
    model: DEMO_MODEL_NAME,
  },
]

/** The names of the tools a request offers. */
function offered(request: ModelRequest): Set<string> {
  return new Set((request.tools ?? []).map((t) => t.function.name))
}

/**
 * The demo for whichever agent asks: the log analyst (it alone has `search_logs` without
 * `query_metrics`) gets its reading; the on-call agent, which delegates the logs, asks the log
 * analyst in its second turn; any other run (the default agent) replays the investigation as
 * recorded.
 */
export function demoFor(request: ModelRequest, turn: number): ModelResponse | undefined {
  const tools = offered(request)
  if (tools.has('search_logs') && !tools.has('query_metrics')) return LOG_ANALYST_TURNS[turn]
  if (turn === 1 && tools.has('ask_log_analyst')) return DELEGATING_TURN
  return demoScript(request, turn)
}

/** The offline demo model used when no OPENAI_API_KEY is configured. */
export function demoModel(): ScriptedModel {
  return new ScriptedModel(demoFor, { name: DEMO_MODEL_NAME })
}
