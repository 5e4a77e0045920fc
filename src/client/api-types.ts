// Generated from the service's /openapi.json by `npm run client:types`: do not edit.
// test/client/api-types.test.ts fails when this file and the served document disagree.

export interface CreateRun {
  task: string
  tools?: string[]
  budget?: {
    maxSteps?: number
    maxPromptTokens?: number
    maxSeconds?: number
    maxConsecutiveErrors?: number
    maxObservationTokens?: number
    loopGuardWindow?: number
    maxContextTokens?: number
    maxHistoryTokens?: number
    maxParallelCalls?: number
    maxCostUsd?: number
    approvalTtlSeconds?: number
  }
  protocol?: 'auto' | 'text' | 'native'
  confirm?: {
    mode: 'deny' | 'dry_run' | 'ask' | 'allowlist' | 'allow'
    tools?: string[]
  }
  agent?: string
  instructions?: string
  output_schema?: Record<string, unknown>
  model?: string
  callback_url?: string
  callback_events?: 'final' | 'all'
  metadata?: Record<string, unknown>
  continue?: string
}

export interface Decision {
  decision: 'approve' | 'deny'
  args_hash: string
  reason?: string
  args?: Record<string, unknown>
}

export type Answer =
  | {
    question_hash: string
    answer: unknown
  }
  | {
    question_hash: string
    decline: true
    reason?: string
  }

export interface Cancel {
  reason?: string
}

export interface CreatedRun {
  id: string
  status: string
  created: boolean
  conversation: {
    id: string
    position: number
    previousRunId: string | null
  }
  links: {
    self: string
    trace: string
    cancel: string
    approvals: string
  }
}

export interface RunView {
  id: string
  status: 'running' | 'awaiting_approval' | 'succeeded' | 'failed'
  phase: 'think' | 'act' | 'await_approval' | 'await_child' | 'done'
  task: string
  createdAt: string
  requestedBy: string
  metadata?: Record<string, unknown>
  slack?: {
    channel: string
    threadTs?: string
    userId?: string
    teamId?: string
  }
  blocked?: {
    code: 'misconfigured'
    variable?: string
    message: string
    since: string
    retryAt: string
  }
  agent: {
    name: string
    version: string
  }
  conversation: {
    id: string
    position: number
    previousRunId: string | null
    historyTurns: number
    droppedTurns: number
  }
  parentRunId: string | null
  children: Array<{
    callId: string
    runId: string
    agent: string
    status: 'running' | 'awaiting_approval' | 'succeeded' | 'failed'
  }>
  stepCount: number
  pendingApprovals: Array<{
    callId: string
    tool: string
    args: Record<string, unknown>
    argsHash: string
    reason: string
    requestedBy: string
    requestedAt: string
    expiresAt: string
    kind: 'approval' | 'question' | 'connect'
    ask:
      | {
        message: string
        choices: string[] | null
        schema: Record<string, unknown> | null
        details: Record<string, unknown> | null
      }
      | null
    editSchema: Record<string, unknown> | null
    actions: Array<
      | 'approve'
      | 'deny'
      | 'edit'
      | 'answer'
      | 'decline'
      | 'connect'>
    href: string | null
  }>
  descendantApprovals: Array<{
    runId: string
    agent: string
    callId: string
    tool: string
    args: Record<string, unknown>
    argsHash: string
    reason: string
    requestedBy: string
    requestedAt: string
    expiresAt: string
    kind: 'approval' | 'question' | 'connect'
    ask:
      | {
        message: string
        choices: string[] | null
        schema: Record<string, unknown> | null
        details: Record<string, unknown> | null
      }
      | null
    editSchema: Record<string, unknown> | null
    actions: Array<
      | 'approve'
      | 'deny'
      | 'edit'
      | 'answer'
      | 'decline'
      | 'connect'>
    href: string | null
  }>
  result: RunResult
  deliveries: Array<{
    id: string
    kind: string
    status: 'pending' | 'delivered' | 'failed'
    attempts: number
    nextAt: string
    lastError?: string
    updatedAt: string
  }>
}

export interface RunResult {
  id: string
  ok: boolean
  answer: string
  output?: unknown
  stopReason:
    | 'finish'
    | 'max_steps'
    | 'token_budget'
    | 'cost_budget'
    | 'timeout'
    | 'unparsable_exhausted'
    | 'tool_error_exhausted'
    | 'cancelled'
    | 'model_error'
    | 'content_filter'
    | 'output_invalid'
    | 'guardrail'
    | 'internal_error'
    | null
  error?: string
  phase: 'think' | 'act' | 'await_approval' | 'await_child' | 'done'
  protocol: 'text' | 'native'
  model?: string
  agent: {
    name: string
    version: string
  }
  conversation: {
    id: string
    position: number
    previousRunId: string | null
    historyTurns: number
    droppedTurns: number
  }
  parentRunId?: string
  children?: Array<{
    callId: string
    runId: string
    agent: string
    status: 'running' | 'succeeded' | 'failed'
  }>
  guardrail?: {
    name: string
    point: 'input' | 'toolInput' | 'toolOutput' | 'output'
    reason: string
    tool?: string
    callId?: string
  }
  guardrails?: Array<{
    guardrail: string
    point: 'input' | 'toolInput' | 'toolOutput' | 'output'
    verdict: 'pass' | 'tripwire' | 'rewrite'
    reason: string | null
    error: string | null
    step: number | null
    tool: string | null
    callId: string | null
    ms: number
    promptTokens: number | null
    completionTokens: number | null
    costUsd: number | null
  }>
  steps: Array<{
    i: number
    kind: 'action' | 'finish' | 'format_error'
    thought: string
    calls: Array<{
      id: string
      name: string
      args: Record<string, unknown>
      observation: string
      originalSize: number
      truncated: boolean
      handle?: string
      ms: number
      status:
        | 'pending'
        | 'ready'
        | 'awaiting_approval'
        | 'approved'
        | 'denied'
        | 'started'
        | 'done'
      kind?:
        | 'ok'
        | 'tool_error'
        | 'dry_run'
        | 'loop_guard'
        | 'denied'
        | 'outcome_unknown'
      approval?: {
        argsHash: string
        requestedAt: string
        expiresAt: string
        decision: 'approved' | 'denied' | null
        decidedBy: string | null
        decidedAt: string | null
        reason: string | null
        kind: 'approval' | 'question' | 'connect'
        ask:
          | {
            message: string
            choices: string[] | null
            schema: Record<string, unknown> | null
            details: Record<string, unknown> | null
          }
          | null
        answer: unknown
        edit:
          | {
            originalArgs: Record<string, unknown>
            originalHash: string
            by: string
            at: number
          }
          | null
        editSchema: Record<string, unknown> | null
      }
      policy?: {
        configured: 'run' | 'ask' | 'dry_run' | 'deny'
        applied: 'run' | 'ask' | 'dry_run' | 'deny'
        policy:
          | {
            verdict: 'allow' | 'ask' | 'deny'
            reason: string | null
            error: string | null
          }
          | null
        shadow:
          | {
            verdict: 'allow' | 'ask' | 'deny'
            reason: string | null
            error: string | null
          }
          | null
        agent:
          | {
            verdict: 'allow' | 'ask' | 'deny'
            reason: string | null
            error: string | null
          }
          | null
      }
      argsError?: string
      fromText?: string
    }>
    promptTokens: number
    completionTokens: number
    estimated: boolean
    costUsd?: number
    cachedPromptTokens?: number
    elidedTokens: number
    toolSpecTokens: number
    lostModelCalls: number
    ms: number
    modelMs: number
    finishReason: string
    formatError?: string
  }>
  usage: {
    promptTokens: number
    completionTokens: number
    estimated: boolean
    costUsd?: number
    cachedPromptTokens: number
    modelCalls: number
    lostModelCalls: number
    lostPromptTokens: number
    activeMs: number
  }
  skippedTools?: Array<{
    tool: string
    reason: string
  }>
}

export interface DecisionResult {
  ok: true
  call: {
    id: string
    name: string
    status: string
  }
  decidedBy: string
  decision: string
  kind?: 'approval' | 'question' | 'connect'
  args?: Record<string, unknown>
  argsHash?: string
  replayed?: true
}

export interface Cancelling {
  id: string
  status: 'cancelling'
  message: string
}

export interface RunPage {
  items: Array<{
    id: string
    task: string
    status: 'running' | 'awaiting_approval' | 'succeeded' | 'failed'
    createdAt: string
    updatedAt: string
    stepCount: number
    requestedBy: string
    metadata?: Record<string, unknown>
    agent: {
      name: string
      version: string
    }
    conversation: {
      id: string
      position: number
    }
    parentRunId?: string
  }>
  nextCursor: string | null
}

export interface ApprovalPage {
  items: Array<{
    runId: string
    callId: string
    tool: string
    args: Record<string, unknown>
    argsHash: string
    reason: string
    requestedBy: string
    requestedAt: string
    expiresAt: string
    kind: 'approval' | 'question' | 'connect'
    ask:
      | {
        message: string
        choices: string[] | null
        schema: Record<string, unknown> | null
        details: Record<string, unknown> | null
      }
      | null
    editSchema: Record<string, unknown> | null
    actions: Array<
      | 'approve'
      | 'deny'
      | 'edit'
      | 'answer'
      | 'decline'
      | 'connect'>
    href: string | null
  }>
  nextCursor: string | null
}

export type RunEvent =
  | {
    seq: number
    runId: string
    type: 'step_started'
    at: string
    data: {
      step: number
    }
  }
  | {
    seq: number
    runId: string
    type: 'model_replied'
    at: string
    data: {
      step: number
      kind: 'action' | 'finish' | 'format_error'
      thought: string
      calls: Array<{
        id: string
        tool: string
        args: Record<string, unknown>
      }>
      answer?: string
      formatError?: string
      promptTokens: number
      completionTokens: number
      costUsd?: number
      modelMs: number
    }
  }
  | {
    seq: number
    runId: string
    type: 'call_started'
    at: string
    data: {
      step: number
      callId: string
      tool: string
      args: Record<string, unknown>
    }
  }
  | {
    seq: number
    runId: string
    type: 'call_finished'
    at: string
    data: {
      step: number
      callId: string
      tool: string
      kind:
        | 'ok'
        | 'tool_error'
        | 'dry_run'
        | 'loop_guard'
        | 'denied'
        | 'outcome_unknown'
      observation: string
      truncated: boolean
      originalSize: number
      handle?: string
      ms: number
    }
  }
  | {
    seq: number
    runId: string
    type: 'approval_requested'
    at: string
    data: {
      step: number
      callId: string
      tool: string
      args: Record<string, unknown>
      argsHash: string
      reason: string
      expiresAt: string
      kind?: 'approval' | 'question' | 'connect'
      ask?: {
        message: string
        choices: string[] | null
        schema: Record<string, unknown> | null
        details: Record<string, unknown> | null
      }
    }
  }
  | {
    seq: number
    runId: string
    type: 'approval_decided'
    at: string
    data: {
      step: number
      callId: string
      tool: string
      decision: 'approved' | 'denied'
      by: string
      reason?: string
      kind?: 'approval' | 'question' | 'connect'
      editedArgs?: Record<string, unknown>
    }
  }
  | {
    seq: number
    runId: string
    type: 'child_started'
    at: string
    data: {
      step: number
      callId: string
      tool: string
      runId: string
      agent: string
    }
  }
  | {
    seq: number
    runId: string
    type: 'child_finished'
    at: string
    data: {
      step: number
      callId: string
      tool: string
      runId: string
      agent: string
      status: 'running' | 'awaiting_approval' | 'succeeded' | 'failed'
    }
  }
  | {
    seq: number
    runId: string
    type: 'run_finished'
    at: string
    data: {
      ok: boolean
      answer: string
      output?: unknown
      agent: {
        name: string
        version: string
      }
      stopReason:
        | 'finish'
        | 'max_steps'
        | 'token_budget'
        | 'cost_budget'
        | 'timeout'
        | 'unparsable_exhausted'
        | 'tool_error_exhausted'
        | 'cancelled'
        | 'model_error'
        | 'content_filter'
        | 'output_invalid'
        | 'guardrail'
        | 'internal_error'
      error?: string
      guardrail?: {
        name: string
        point: 'input' | 'toolInput' | 'toolOutput' | 'output'
        reason: string
        tool?: string
        callId?: string
      }
      stepCount: number
      usage: {
        promptTokens: number
        completionTokens: number
        estimated: boolean
        costUsd?: number
        cachedPromptTokens: number
        modelCalls: number
        lostModelCalls: number
        lostPromptTokens: number
        activeMs: number
      }
    }
  }
  | {
    seq: number
    runId: string
    type: 'guardrail_tripped'
    at: string
    data: {
      guardrail: string
      point: 'input' | 'toolInput' | 'toolOutput' | 'output'
      reason?: string
      error?: string
      step?: number
      tool?: string
      callId?: string
    }
  }
  | {
    seq: number
    runId: string
    type: 'guardrail_rewrote'
    at: string
    data: {
      guardrail: string
      point: 'input' | 'toolInput' | 'toolOutput' | 'output'
      reason?: string
      error?: string
      step?: number
      tool?: string
      callId?: string
    }
  }

export type RunListEvent =
  | {
    type: 'run'
    run: {
      id: string
      task: string
      status: 'running' | 'awaiting_approval' | 'succeeded' | 'failed'
      createdAt: string
      updatedAt: string
      stepCount: number
      requestedBy: string
      metadata?: Record<string, unknown>
      agent: {
        name: string
        version: string
      }
      conversation: {
        id: string
        position: number
      }
      parentRunId?: string
    }
    approvals: Array<{
      runId: string
      callId: string
      tool: string
      args: Record<string, unknown>
      argsHash: string
      reason: string
      requestedBy: string
      requestedAt: string
      expiresAt: string
      kind: 'approval' | 'question' | 'connect'
      ask:
        | {
          message: string
          choices: string[] | null
          schema: Record<string, unknown> | null
          details: Record<string, unknown> | null
        }
        | null
      editSchema: Record<string, unknown> | null
      actions: Array<
        | 'approve'
        | 'deny'
        | 'edit'
        | 'answer'
        | 'decline'
        | 'connect'>
      href: string | null
    }>
  }
  | {
    type: 'run_deleted'
    id: string
  }
  | {
    type: 'ready'
    relist: boolean
  }

export interface StoredObservation {
  handle: string
  text: string
}

export interface RunApprovals {
  runId: string
  status: 'running' | 'awaiting_approval' | 'succeeded' | 'failed'
  pendingApprovals: Array<{
    callId: string
    tool: string
    args: Record<string, unknown>
    argsHash: string
    reason: string
    requestedBy: string
    requestedAt: string
    expiresAt: string
    kind: 'approval' | 'question' | 'connect'
    ask:
      | {
        message: string
        choices: string[] | null
        schema: Record<string, unknown> | null
        details: Record<string, unknown> | null
      }
      | null
    editSchema: Record<string, unknown> | null
    actions: Array<
      | 'approve'
      | 'deny'
      | 'edit'
      | 'answer'
      | 'decline'
      | 'connect'>
    href: string | null
  }>
  descendantApprovals: Array<{
    runId: string
    agent: string
    callId: string
    tool: string
    args: Record<string, unknown>
    argsHash: string
    reason: string
    requestedBy: string
    requestedAt: string
    expiresAt: string
    kind: 'approval' | 'question' | 'connect'
    ask:
      | {
        message: string
        choices: string[] | null
        schema: Record<string, unknown> | null
        details: Record<string, unknown> | null
      }
      | null
    editSchema: Record<string, unknown> | null
    actions: Array<
      | 'approve'
      | 'deny'
      | 'edit'
      | 'answer'
      | 'decline'
      | 'connect'>
    href: string | null
  }>
}

export interface Health {
  ok: true
  service: 'edgeloop'
}

export interface Ready {
  ok: true
  service: 'edgeloop'
  /** Settings allowed but probably not meant. */
  warnings: string[]
}

export interface Misconfigured {
  error: {
    code: 'misconfigured'
    message: string
    details: {
      problems: Array<{
        variable: string
        message: string
        agent?: string
        field?: string
      }>
      warnings: string[]
    }
  }
}

export interface MisconfiguredSummary {
  error: {
    code: 'misconfigured'
    message: string
    details: {
      problemCount: number
      variables: string[]
    }
  }
}

export interface Me {
  name: string
  scopes: Array<
    | 'runs:write'
    | 'runs:read'
    | 'approvals:write'
    | 'runs:delete'
    | 'service:read'>
  /** Which runs the token reaches: "all", or "own" (only the runs it started, their follow-ups and children). */
  runs: 'all' | 'own'
}

export interface AgentList {
  agents: Array<{
    name: string
    description: string
    tools: string[]
    model: string | null
    protocol: string | null
    outputSchema: Record<string, unknown> | null
    delegates: string[]
  }>
}

export interface Agent {
  name: string
  description: string
  tools: string[]
  model: string | null
  protocol: string | null
  outputSchema: Record<string, unknown> | null
  delegates: string[]
  instructions: string
}

export interface Deleted {
  id: string
  status: 'deleted' | 'deleting'
}

export interface RunExport {
  format: 'edgeloop.run-export'
  version: 1
  exportedAt: string
  run: RunView
  state: Record<string, unknown>
  trace: RunResult
  observations: StoredObservation[]
  events: RunEvent[]
}

export interface ConnectionList {
  servers: Array<{
    name: string
    auth: 'oauth' | 'client_credentials'
    owner: 'deployment' | 'person'
  }>
  connections: Array<{
    server: string
    owner: string
    grantor: string
    scopes: string | null
    grantedAt: number
    expiresAt: number | null
  }>
}

export interface ConnectLinkRequest {
  runId?: string
  itemId?: string
  scopes?: string
}

export interface ConnectLink {
  server: string
  owner: string | null
  url: string
  expiresAt: number
}

export interface ConnectionDeleted {
  server: string
  owner: string
  deleted: true
  revoked: boolean
}

export interface McpRequest {
  jsonrpc: '2.0'
  /** A request's id, and the same in the response that answers it; a notification has none. */
  id?: string | number | null
  /** initialize, ping, tools/list, tools/call, tasks/get, tasks/result, tasks/cancel, logging/setLevel, or a notification (notifications/initialized, notifications/cancelled, …); the params are MCP’s (protocol 2025-11-25). */
  method: string
  params?: Record<string, unknown>
}

export interface McpResponse {
  jsonrpc: '2.0'
  /** A request's id, and the same in the response that answers it; a notification has none. */
  id: string | number | null
  /** The method’s result as MCP defines it (InitializeResult, ListToolsResult, CallToolResult, CreateTaskResult, GetTaskResult, …); from the client, an elicitation’s ElicitResult. */
  result?: unknown
  error?: {
    /** JSON-RPC codes: -32700 parse error, -32600 invalid request, -32601 unknown method, -32602 invalid params (an unknown tool, arguments the agent refuses), -32603 internal, -32001 request timeout (a call that outlasted its wait; its run goes on). */
    code: number
    message: string
    /** More about the error, as the protocol defines it. */
    data?: unknown
  }
}

/** One JSON-RPC message: a request or notification, or the client’s response to an elicitation this server sent. */
export type McpMessage = McpRequest | McpResponse

export interface A2aRequest {
  jsonrpc: '2.0'
  /** A request's id, and the same in the response that answers it; a notification has none. */
  id?: string | number | null
  method:
    | 'SendMessage'
    | 'SendStreamingMessage'
    | 'GetTask'
    | 'CancelTask'
    | 'SubscribeToTask'
    | 'message/send'
    | 'message/stream'
    | 'tasks/get'
    | 'tasks/cancel'
    | 'tasks/resubscribe'
  params?: Record<string, unknown>
}

export interface A2aResponse {
  jsonrpc: '2.0'
  /** A request's id, and the same in the response that answers it; a notification has none. */
  id: string | number | null
  /** The method’s result: a Task, or a message/stream event */
  result?: unknown
  error?: {
    /** JSON-RPC and A2A codes: -32700 parse error, -32600 invalid request (no or a bad token, a body too large or too deep), -32601 unknown method, -32602 invalid params (an unknown skill, a message without text), -32603 internal, -32001 task not found (also another token’s task), -32002 task not cancelable, -32003 push notifications not supported, -32004 unsupported operation (a missing scope, a message to a task that waits for an approval), -32005 content type not supported (file parts). */
    code: number
    message: string
    data?: Array<Record<string, unknown>>
  }
}
