import * as z from 'zod/mini'
import { STOP_REASONS } from '../kernel/budget'
import { GUARDRAIL_POINTS } from '../kernel/guardrails/guardrail'
import { ConversationViewSchema } from '../kernel/conversation-schema'
import {
  ApprovalSchema,
  DECISIONS,
  OBSERVATION_KINDS,
  PENDING_KINDS,
  PersonAskSchema,
  PHASES,
  STEP_KINDS,
} from '../kernel/state'
import {
  RunAgentSchema,
  RunResultSchema,
  TrippedGuardrailSchema,
  TraceCallSchema,
  TraceChildSchema,
  TraceStepSchema,
  TraceUsageSchema,
} from '../kernel/trace'
import { RUN_VISIBILITIES, SCOPES } from '../security/api-tokens'
import { DELIVERY_STATUSES, RUN_STATUSES } from './enums'

/**
 * The response bodies of the HTTP API. They make /openapi.json's response schemas (the client's
 * types are generated from it), and the tests parse real responses with them, so none can drift.
 */

const json = z.record(z.string(), z.unknown())
const iso = z.string().check(z.iso.datetime())
const runStatus = z.enum(RUN_STATUSES)
const phase = z.enum(PHASES)
const stopReason = z.enum(STOP_REASONS)
const decision = z.enum(DECISIONS)
const stepKind = z.enum(STEP_KINDS)
const observationKind = z.enum(OBSERVATION_KINDS)

/** The agent a run started with, and the version of it the run copied (a content hash). */
const RunAgent = RunAgentSchema

/** The kernel's approval record as the API shows it: `argsHash`, ISO 8601 times. */
const { hash: _hash, ...approval } = ApprovalSchema.def.shape
export const Approval = z.object({
  argsHash: z.string(),
  ...approval,
  requestedAt: iso,
  expiresAt: iso,
  decidedAt: z.nullable(iso),
})

/** The kernel's trace (src/kernel/trace.ts), its approvals as the API shows them. */
export const Usage = TraceUsageSchema
export const TraceCall = z.extend(TraceCallSchema, { approval: z.optional(Approval) })
export const TraceStep = z.extend(TraceStepSchema, { calls: z.array(TraceCall) })

/** Where a run stands in its conversation (docs/http-api.md, "Conversations"). */
export const Conversation = ConversationViewSchema

/** `POST /v1/runs` → 202 (or 200 when an Idempotency-Key finds the run it started). */
export const CreatedRun = z.object({
  id: z.string(),
  status: z.string(),
  created: z.boolean(),
  /** Where the run stands in its conversation (the run view has its history counts too). */
  conversation: z.pick(Conversation, { id: true, position: true, previousRunId: true }),
  links: z.object({
    self: z.string(),
    trace: z.string(),
    cancel: z.string(),
    approvals: z.string(),
  }),
})

/** `GET /v1/runs/:id/trace`: the serializable trace (docs/architecture.md#the-five-disciplines, 3). */
export const RunResult = z.extend(RunResultSchema, {
  steps: z.array(TraceStep),
  /** MCP tools left out of the run, and why (present only when there are some). */
  skippedTools: z.optional(z.array(z.object({ tool: z.string(), reason: z.string() }))),
})

/** A child run of a delegated call (docs/agents.md#delegation): the view shows its own status. */
export const ChildRun = z.extend(TraceChildSchema, { status: runStatus })

/** What a person may do with a pending item, by kind (docs/human-in-the-loop.md#the-inbox). */
export const ITEM_ACTIONS = ['approve', 'deny', 'edit', 'answer', 'decline', 'connect'] as const

/**
 * A pending item: an approval (`argsHash` binds the decision to the arguments), a question
 * (`argsHash` is its hash, sent back as `question_hash`) or a connection to make.
 */
export const PendingApproval = z.object({
  callId: z.string(),
  tool: z.string(),
  args: json,
  argsHash: z.string(),
  reason: z.string(),
  requestedBy: z.string(),
  requestedAt: iso,
  expiresAt: iso,
  kind: z.enum(PENDING_KINDS),
  /** What a question or connect item asks; null for an approval. */
  ask: z.nullable(PersonAskSchema),
  /** An approval whose arguments may be edited: their JSON Schema; else null. */
  editSchema: z.nullable(json),
  /**
   * What may be done with it; each is a POST to `href` (an MCP connect item: its server's link
   * route, which answers the single-use link to follow; another connect item: `ask.details.url`).
   */
  actions: z.array(z.enum(ITEM_ACTIONS)),
  href: z.nullable(z.string()),
})

/** A pending approval of a run's child (or its child's child): decided on that run. */
export const DescendantApproval = z.object({
  runId: z.string(),
  agent: z.string(),
  ...PendingApproval.def.shape,
})

export const Delivery = z.object({
  id: z.string(),
  kind: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number(),
  nextAt: iso,
  lastError: z.optional(z.string()),
  updatedAt: iso,
})

/** `GET /v1/runs/:id`. */
export const RunView = z.object({
  id: z.string(),
  status: runStatus,
  phase,
  task: z.string(),
  createdAt: iso,
  requestedBy: z.string(),
  metadata: z.optional(json),
  /**
   * Where the run talks in Slack: a Slack-started run's channel, thread and user; a run of the
   * API, MCP or A2A that posts its pending items' cards in an approvals channel, that channel
   * alone (no `userId`: no Slack user asked).
   */
  slack: z.optional(
    z.object({
      channel: z.string(),
      threadTs: z.optional(z.string()),
      userId: z.optional(z.string()),
      teamId: z.optional(z.string()),
    }),
  ),
  blocked: z.optional(
    z.object({
      code: z.literal('misconfigured'),
      variable: z.optional(z.string()),
      message: z.string(),
      since: iso,
      retryAt: iso,
    }),
  ),
  agent: RunAgent,
  conversation: Conversation,
  /** A child run: the run that delegated it; null otherwise. */
  parentRunId: z.nullable(z.string()),
  /** The child runs of its delegated calls, each with its current status. */
  children: z.array(ChildRun),
  stepCount: z.number(),
  pendingApprovals: z.array(PendingApproval),
  /** Pending approvals of its descendants (child runs, their children …), each naming its run. */
  descendantApprovals: z.array(DescendantApproval),
  result: RunResult,
  deliveries: z.array(Delivery),
})

/** `POST /v1/runs/:id/approvals/:callId` → 200. */
export const DecisionResult = z.object({
  ok: z.literal(true),
  call: z.object({ id: z.string(), name: z.string(), status: z.string() }),
  decidedBy: z.string(),
  decision: z.string(),
  /** The kind of pending item decided, when not an approval: `question` or `connect`. */
  kind: z.optional(z.enum(PENDING_KINDS)),
  /** Approved with edited arguments: the arguments the call runs with, and their hash. */
  args: z.optional(json),
  argsHash: z.optional(z.string()),
  /** The same decision by the same decider, sent again: the one recorded, nothing changed. */
  replayed: z.optional(z.literal(true)),
})

/** `POST /v1/runs/:id/cancel` → 202. */
export const Cancelling = z.object({
  id: z.string(),
  status: z.literal('cancelling'),
  message: z.string(),
})

export const RunListItem = z.object({
  id: z.string(),
  task: z.string(),
  status: runStatus,
  createdAt: iso,
  updatedAt: iso,
  stepCount: z.number(),
  requestedBy: z.string(),
  metadata: z.optional(json),
  agent: RunAgent,
  conversation: z.object({ id: z.string(), position: z.number() }),
  /** A child run: the run that delegated it. */
  parentRunId: z.optional(z.string()),
})

/** A pending approval across runs (`GET /v1/approvals`): the run's, with the run's id. */
export const ApprovalListItem = z.object({ runId: z.string(), ...PendingApproval.def.shape })

export const RunPage = z.object({ items: z.array(RunListItem), nextCursor: z.nullable(z.string()) })
export const ApprovalPage = z.object({
  items: z.array(ApprovalListItem),
  nextCursor: z.nullable(z.string()),
})

/**
 * One `data:` line of `GET /v1/runs/stream`: a run's list row as it now stands (with its pending
 * approvals as the inbox lists them), a deleted run, or `ready` (caught up; `relist`: list again,
 * the changes since the reader's Last-Event-ID are not all held).
 */
export const RunListEvent = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('run'),
    run: RunListItem,
    approvals: z.array(ApprovalListItem),
  }),
  z.object({ type: z.literal('run_deleted'), id: z.string() }),
  z.object({ type: z.literal('ready'), relist: z.boolean() }),
])

const call = { step: z.number(), callId: z.string(), tool: z.string() }
const event = <T extends string, D extends z.ZodMiniType>(type: T, data: D) =>
  z.object({ seq: z.number(), runId: z.string(), type: z.literal(type), at: iso, data })

/** What a guardrail event says: which guardrail, where, and why. */
const guardrailEvent = z.object({
  guardrail: z.string(),
  point: z.enum(GUARDRAIL_POINTS),
  reason: z.optional(z.string()),
  /** The check threw, timed out or gave no verdict (its `onError` decided). */
  error: z.optional(z.string()),
  step: z.optional(z.number()),
  tool: z.optional(z.string()),
  callId: z.optional(z.string()),
})

/** One `data:` line of `GET /v1/runs/:id/events` (and a `callback_events: "all"` body). */
export const RunEvent = z.discriminatedUnion('type', [
  /** The model is asked for step `step` (0-based). */
  event('step_started', z.object({ step: z.number() })),
  event(
    'model_replied',
    z.object({
      step: z.number(),
      kind: stepKind,
      thought: z.string(),
      calls: z.array(z.object({ id: z.string(), tool: z.string(), args: json })),
      answer: z.optional(z.string()),
      formatError: z.optional(z.string()),
      promptTokens: z.number(),
      completionTokens: z.number(),
      costUsd: z.optional(z.number()),
      modelMs: z.number(),
    }),
  ),
  event('call_started', z.object({ ...call, args: json })),
  event(
    'call_finished',
    z.object({
      ...call,
      kind: observationKind,
      /** At most EVENT_OBSERVATION_CHARS (runs/events/events.ts) of the observation the model saw. */
      observation: z.string(),
      /** True when the event or the model saw less than the tool returned. */
      truncated: z.boolean(),
      /** Characters the tool returned. */
      originalSize: z.number(),
      /** Reads the whole output (`read_observation`), when the kernel stored it. */
      handle: z.optional(z.string()),
      ms: z.number(),
    }),
  ),
  /** A call waits for a person: an approval, a question or a connection (`kind`). */
  event(
    'approval_requested',
    z.object({
      ...call,
      args: json,
      argsHash: z.string(),
      reason: z.string(),
      expiresAt: iso,
      /** Absent for an approval. */
      kind: z.optional(z.enum(PENDING_KINDS)),
      /** What a question or connect item asks. */
      ask: z.optional(PersonAskSchema),
    }),
  ),
  event(
    'approval_decided',
    z.object({
      ...call,
      decision,
      by: z.string(),
      reason: z.optional(z.string()),
      kind: z.optional(z.enum(PENDING_KINDS)),
      /** Approved with edited arguments: those the call runs with. */
      editedArgs: z.optional(json),
    }),
  ),
  /** A delegated call started its child run. */
  event('child_started', z.object({ ...call, runId: z.string(), agent: z.string() })),
  /** A child run ended and its answer was recorded as the call's observation. */
  event(
    'child_finished',
    z.object({ ...call, runId: z.string(), agent: z.string(), status: runStatus }),
  ),
  event(
    'run_finished',
    z.object({
      ok: z.boolean(),
      answer: z.string(),
      output: z.optional(z.unknown()),
      /** The run's agent, as the view shows it. */
      agent: RunAgent,
      stopReason,
      error: z.optional(z.string()),
      /** A run a guardrail ended: which one, where and why. */
      guardrail: z.optional(TrippedGuardrailSchema),
      stepCount: z.number(),
      usage: Usage,
    }),
  ),
  /** A guardrail stopped the run (docs/guardrails.md); run_finished follows. */
  event('guardrail_tripped', guardrailEvent),
  /** A guardrail let a replacement through: redacted text, framed text, cleaned arguments. */
  event('guardrail_rewrote', guardrailEvent),
])

/** `GET /v1/runs/:id/observations/:handle`. */
export const StoredObservation = z.object({ handle: z.string(), text: z.string() })

/** `GET /healthz`: liveness only, whatever the settings. */
export const Health = z.object({ ok: z.literal(true), service: z.literal('edgeloop') })

/** `GET /readyz` and `GET /healthz?deep=1` when every setting is good. */
export const Ready = z.object({
  ok: z.literal(true),
  service: z.literal('edgeloop'),
  warnings: z.array(z.string()).check(z.describe('Settings allowed but probably not meant.')),
})

/** Their 503 (src/config/problems.ts): every configuration problem at once. */
export const Misconfigured = z.object({
  error: z.object({
    code: z.literal('misconfigured'),
    message: z.string(),
    details: z.object({
      problems: z.array(
        z.object({
          variable: z.string(),
          message: z.string(),
          /** An agent's problem: the agent, and the field of its definition. */
          agent: z.optional(z.string()),
          field: z.optional(z.string()),
        }),
      ),
      warnings: z.array(z.string()),
    }),
  }),
})

/** Their 503 without credentials: which variables are wrong, none of the problems' text. */
export const MisconfiguredSummary = z.object({
  error: z.object({
    code: z.literal('misconfigured'),
    message: z.string(),
    details: z.object({
      problemCount: z.int().check(z.positive()),
      variables: z.array(z.string()),
    }),
  }),
})

/** `GET /v1/runs/:id/approvals`: what a run's `links.approvals` points at. */
export const RunApprovals = z.object({
  runId: z.string(),
  status: runStatus,
  pendingApprovals: z.array(PendingApproval),
  /** Pending approvals of its child runs (and theirs), each decided on its own run. */
  descendantApprovals: z.array(DescendantApproval),
})

/** An item of `GET /v1/agents`. */
export const AgentItem = z.object({
  name: z.string(),
  description: z.string(),
  /** Built-in and MCP tool names (`<server>__*`: every tool of that server). */
  tools: z.array(z.string()),
  /** Null: the deployment's MODEL. */
  model: z.nullable(z.string()),
  /** Null: the deployment's MODEL_PROTOCOL. */
  protocol: z.nullable(z.string()),
  /** The final answer's JSON Schema; null: a plain text answer. */
  outputSchema: z.nullable(z.record(z.string(), z.unknown())),
  /** Agents it may hand a task to, each as an `ask_<name>` tool (docs/agents.md#delegation). */
  delegates: z.array(z.string()),
})

/** `GET /v1/agents`. */
export const AgentList = z.object({ agents: z.array(AgentItem) })

/** `GET /v1/agents/{name}`: the item and the instructions put first in its runs' prompts. */
export const AgentDetail = z.object({ ...AgentItem.def.shape, instructions: z.string() })

/** `GET /v1/me`: the token that asked, by the name decisions are recorded under. */
export const Me = z.object({
  name: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  /** `own`: the token reaches only the runs it started (docs/security.md#who-sees-which-runs). */
  runs: z
    .enum(RUN_VISIBILITIES)
    .check(
      z.describe(
        'Which runs the token reaches: "all", or "own" (only the runs it started, their follow-ups and children).',
      ),
    ),
})

/** An MCP connection as listed (docs/mcp.md#oauth): who granted what, never its tokens. */
export const Connection = z.object({
  server: z.string(),
  /** `deployment`, or the person it is for: `token:<name>`, `slack:<user id>`. */
  owner: z.string(),
  /** Who granted it: `token:<name>`, `slack:<user id>`, or `client_credentials`. */
  grantor: z.string(),
  scopes: z.nullable(z.string()),
  grantedAt: z.number(),
  /** When the access token expires (it is refreshed then), if the server said. */
  expiresAt: z.nullable(z.number()),
})

/** An MCP server that uses OAuth, as the console offers it (Connect). */
export const OAuthServer = z.object({
  name: z.string(),
  auth: z.enum(['oauth', 'client_credentials']),
  /** Whose connection runs use: one for the deployment, or each person's. */
  owner: z.enum(['deployment', 'person']),
})

/** `GET /v1/connections`: the servers that use OAuth, and the connections granted. */
export const ConnectionList = z.object({
  servers: z.array(OAuthServer),
  connections: z.array(Connection),
})

/** `POST /v1/connections/:server/link`: a single-use link that starts the grant. */
export const ConnectLink = z.object({
  server: z.string(),
  owner: z.nullable(z.string()),
  url: z.string(),
  expiresAt: z.number(),
})

/** `DELETE /v1/connections/:server`: forgotten; `revoked` when its server accepted revocation. */
export const ConnectionDeleted = z.object({
  server: z.string(),
  owner: z.string(),
  deleted: z.literal(true),
  revoked: z.boolean(),
})

/** `DELETE /v1/runs/:id`: gone now, or as soon as the slice in flight stops (reads are 404 already). */
export const Deleted = z.object({ id: z.string(), status: z.enum(['deleted', 'deleting']) })

/** `GET /v1/runs/:id/export`: the whole run in one document. */
export const RunExport = z.object({
  format: z.literal('edgeloop.run-export'),
  version: z.literal(1),
  exportedAt: iso,
  run: RunView,
  /** The kernel's RunState, every step in full (the schema of `edgeloop/kernel`). */
  state: json,
  trace: RunResult,
  /** Every stored observation, in full. */
  observations: z.array(StoredObservation),
  events: z.array(RunEvent),
})

export type RunViewBody = z.infer<typeof RunView>
export type AgentItemBody = z.infer<typeof AgentItem>
export type AgentBody = z.infer<typeof AgentDetail>
export type AgentListBody = z.infer<typeof AgentList>
export type PendingApprovalBody = z.infer<typeof PendingApproval>
export type DeliveryBody = z.infer<typeof Delivery>
export type RunListItemBody = z.infer<typeof RunListItem>
export type ApprovalListItemBody = z.infer<typeof ApprovalListItem>
export type RunResultBody = z.infer<typeof RunResult>
export type RunEventBody = z.infer<typeof RunEvent>
export type RunPageBody = z.infer<typeof RunPage>
export type RunListEventBody = z.infer<typeof RunListEvent>
export type ApprovalPageBody = z.infer<typeof ApprovalPage>
export type DecisionResultBody = z.infer<typeof DecisionResult>
export type StoredObservationBody = z.infer<typeof StoredObservation>
export type CancellingBody = z.infer<typeof Cancelling>
export type MeBody = z.infer<typeof Me>
export type DeletedBody = z.infer<typeof Deleted>
export type RunExportBody = z.infer<typeof RunExport>
