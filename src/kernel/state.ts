import * as z from 'zod/mini'
import { agentSnapshot, AgentSnapshotSchema, type AgentInput } from './agent-schema'
import { BudgetSchema, DEFAULT_BUDGET, STOP_REASONS, type Budget } from './budget'
import { CONFIRM_MODES, type ConfirmPolicy } from './confirm'
import { ConversationSchema, type Conversation } from './conversation-schema'
import { KernelUsageError } from '../errors/kernel-usage-error'
import { migrateRunState } from './migrate'
import { NATIVE_TOOL_NAME_PATTERN } from './names'
import type { Outcome } from './outcome'
import { GuardrailRecordSchema } from './guardrails/guardrail'

/**
 * The persisted shape of a run (docs/architecture.md, "The run as a step machine"): plain JSON,
 * and every record has a fixed set of keys, `null` when empty, so a transition updates it with
 * a plain spread that never adds a key. `v` is bumped on any incompatible change, and
 * `parseRunState` migrates older versions (src/kernel/migrate.ts).
 */
export const RUN_STATE_VERSION = 4

export const CALL_STATUSES = [
  'pending', // recorded from the model, not yet reviewed
  'ready', // may run (read-only, or the policy decides inside dispatch)
  'awaiting_approval', // waits for a person
  'approved',
  'denied',
  'started', // a side effect is about to run; persisted before it runs
  'done',
] as const

/** Where a run is in the step machine (docs/architecture.md#step-machine). */
export const PHASES = ['think', 'act', 'await_approval', 'await_child', 'done'] as const

/** What a step's reply was: calls to make, the final answer, or unusable. */
export const STEP_KINDS = ['action', 'finish', 'format_error'] as const

/** How a person decided an approval. */
export const DECISIONS = ['approved', 'denied'] as const

/** How the model is asked for calls: native tool calling, or JSON actions in text. */
export const PROTOCOLS = ['text', 'native'] as const

/** What a run was asked to use: one protocol, or `auto` (native, falling back to text). */
export const PROTOCOL_SETTINGS = ['auto', ...PROTOCOLS] as const

export const OBSERVATION_KINDS = [
  'ok',
  'tool_error',
  'dry_run',
  'loop_guard',
  'denied',
  'outcome_unknown',
] as const

/**
 * What a pending item asks a person for (docs/human-in-the-loop.md): to approve a call, to answer
 * a question, or to connect an account the call needs.
 */
export const PENDING_KINDS = ['approval', 'question', 'connect'] as const
export type PendingKind = (typeof PENDING_KINDS)[number]

/** What a `question` or `connect` item shows the person; null on an approval (the call is it). */
export const PersonAskSchema = z.object({
  /** The question, or what to connect and why. */
  message: z.string(),
  /** A question's choices: the answer is one of them. */
  choices: z.nullable(z.array(z.string())),
  /** A question's JSON Schema: the answer must match it. */
  schema: z.nullable(z.record(z.string(), z.unknown())),
  /** Anything the code that made the item shows or needs back (a connect item's server, URL). */
  details: z.nullable(z.record(z.string(), z.unknown())),
})
export type PersonAsk = z.infer<typeof PersonAskSchema>

/** Arguments a person changed before approving: the call runs with the edited ones. */
export const ArgsEditSchema = z.object({
  originalArgs: z.record(z.string(), z.unknown()),
  originalHash: z.string(),
  by: z.string(),
  at: z.number(),
})
export type ArgsEdit = z.infer<typeof ArgsEditSchema>

/**
 * A pending item: a call waiting for a person (docs/human-in-the-loop.md#pending-items). Stored
 * on the call as `approval`, the key it had when approvals were the only kind; the keys added
 * since default, so a state saved before them reads as an approval.
 */
export const ApprovalSchema = z.object({
  /**
   * SHA-256 of the canonical `{ name, args }` (approval, question: the question is in the
   * arguments) or of `{ name, args, ask }` (connect): a decision binds to exactly what was asked.
   */
  hash: z.string(),
  requestedAt: z.number(),
  expiresAt: z.number(),
  decision: z.nullable(z.enum(DECISIONS)),
  decidedBy: z.nullable(z.string()),
  decidedAt: z.nullable(z.number()),
  /** `expired`, `cancelled`, `declined`, or the decider's words. */
  reason: z.nullable(z.string()),
  kind: z._default(z.enum(PENDING_KINDS), 'approval'),
  ask: z._default(z.nullable(PersonAskSchema), null),
  /** A question's answer, or what a connect item was resolved with; null until then. */
  answer: z._default(z.unknown(), null),
  /** Set when the approver changed the arguments (the call's `args` are the edited ones). */
  edit: z._default(z.nullable(ArgsEditSchema), null),
  /**
   * An approval whose arguments the approver may change: the tool's JSON Schema of them, which
   * a form is built from; null when the tool forbids edits (`editable: false`) or for another kind.
   */
  editSchema: z._default(z.nullable(z.record(z.string(), z.unknown())), null),
})
export type Approval = z.infer<typeof ApprovalSchema>
/** The same record under the name the lifecycle goes by. */
export type PendingItem = Approval

/** What one code policy said about a call. */
export const PolicyVerdictRecordSchema = z.object({
  verdict: z.enum(['allow', 'ask', 'deny']),
  reason: z.nullable(z.string()),
  /** Why the policy's answer could not be used (it threw): the call was asked about instead. */
  error: z.nullable(z.string()),
})
export type PolicyVerdictRecord = z.infer<typeof PolicyVerdictRecordSchema>

/** How a call's code policies decided it (docs/human-in-the-loop.md#policies-as-code). */
export const CallPolicySchema = z.object({
  /** What the confirm policy alone said. */
  configured: z.enum(['run', 'ask', 'dry_run', 'deny']),
  /** What applied: the strictest of the confirm policy, the tool's policy and the agent's. */
  applied: z.enum(['run', 'ask', 'dry_run', 'deny']),
  /** The tool's policy; null when it has only a shadow policy. */
  policy: z.nullable(PolicyVerdictRecordSchema),
  /** The candidate policy in shadow mode: what it would have said, never applied. */
  shadow: z.nullable(PolicyVerdictRecordSchema),
  /** The agent's policy (asked about every call of its runs); null when it has none. */
  agent: z._default(z.nullable(PolicyVerdictRecordSchema), null),
})
export type CallPolicy = z.infer<typeof CallPolicySchema>

/** The child run a delegated call started (docs/agents.md#delegation). */
export const ChildRefSchema = z.object({
  runId: z.string(),
  agent: z.string(),
})
export type ChildRef = z.infer<typeof ChildRefSchema>

/** The run a child run was started by, and where in the delegation tree it stands. */
export const ParentRefSchema = z.object({
  runId: z.string(),
  /** The parent's call that started this run. */
  callId: z.string(),
  /** The parent's agent. */
  agent: z.string(),
  /** 1 for a child of a run nobody delegated to, 2 for its child, … */
  depth: z.number(),
})
export type ParentRef = z.infer<typeof ParentRefSchema>

export const CallSchema = z.object({
  id: z.string(),
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
  /** Native protocol: the argument string exactly as the model sent it. */
  rawArgs: z.nullable(z.string()),
  /** Why the argument text could not be used (dispatch reports it). */
  argsError: z.nullable(z.string()),
  /**
   * Native protocol: the call was written into the reply's text, not sent as `tool_calls`, and
   * read in this format family. Null for real tool calls and in the text protocol.
   */
  fromText: z.nullable(z.string()),
  status: z.enum(CALL_STATUSES),
  approval: z.nullable(ApprovalSchema),
  observation: z.nullable(z.string()),
  kind: z.nullable(z.enum(OBSERVATION_KINDS)),
  /** Characters of the observation before truncation. */
  originalSize: z.nullable(z.number()),
  /** Estimated tokens of the observation, counted once when it is recorded. */
  tokens: z.nullable(z.number()),
  truncated: z.boolean(),
  handle: z.nullable(z.string()),
  ms: z.nullable(z.number()),
  /** Times a side effect was started (more than 1 only for idempotent tools after a crash). */
  attempts: z.number(),
  /** A delegated call: the child run it started; null for every other call. */
  child: z._default(z.nullable(ChildRefSchema), null),
  /** What the tool's code policies said; null for a tool without any. */
  policy: z._default(z.nullable(CallPolicySchema), null),
})
export type Call = z.infer<typeof CallSchema>

export const StepSchema = z.object({
  i: z.number(),
  kind: z.enum(STEP_KINDS),
  thought: z.string(),
  /** The model's text as sent (text protocol: replayed as the assistant message). */
  text: z.nullable(z.string()),
  calls: z.array(CallSchema),
  answer: z.nullable(z.string()),
  /** For `format_error`: the observation shown to the model. */
  formatError: z.nullable(z.string()),
  finishReason: z.string(),
  promptTokens: z.number(),
  completionTokens: z.number(),
  /** True when the provider reported no usage and the kernel estimated it. */
  estimated: z.boolean(),
  costUsd: z.nullable(z.number()),
  /** Model calls for this step whose answers were lost to a crash (each made again). */
  lostModelCalls: z.number(),
  /** Of `promptTokens`, those the provider served from its prompt cache (null: not reported). */
  cachedPromptTokens: z._default(z.nullable(z.number()), null),
  /** Steps (the oldest) whose observations this step's request elided (maxContextTokens). */
  elidedSteps: z._default(z.number(), 0),
  /** Tokens that elision saved in this step's request. */
  elidedTokens: z._default(z.number(), 0),
  /** Estimated tokens of the tool specs offered in this step's request. */
  toolSpecTokens: z._default(z.number(), 0),
  /** The model name the provider said answered this step's call; null: it named none. */
  responseModel: z._default(z.nullable(z.string()), null),
  /** The provider's id of the response (`chatcmpl-…`); null: it gave none. */
  responseId: z._default(z.nullable(z.string()), null),
  /** Model call time plus tool time of this step. */
  ms: z.number(),
  modelMs: z.number(),
  at: z.number(),
})
export type Step = z.infer<typeof StepSchema>

export const UsageSchema = z.object({
  /** Prompt tokens of every model call made, lost ones (estimated) included. */
  promptTokens: z.number(),
  completionTokens: z.number(),
  /** True when any figure was estimated (no usage reported, or a call's answer was lost). */
  estimated: z.boolean(),
  costUsd: z.nullable(z.number()),
  /** Prompt tokens the provider served from its prompt cache, summed where reported. */
  cachedPromptTokens: z._default(z.number(), 0),
  /** Every model call made, lost ones included. */
  modelCalls: z.number(),
  /** Model calls whose answers were lost to a crash, and the prompt tokens estimated for them. */
  lostModelCalls: z.number(),
  lostPromptTokens: z.number(),
})
export type Usage = z.infer<typeof UsageSchema>

export const PolicySchema = z.object({
  mode: z.enum(CONFIRM_MODES),
  tools: z.optional(z.array(z.string())),
})

export const RunOutcomeSchema = z.object({
  ok: z.boolean(),
  answer: z.string(),
  stopReason: z.enum(STOP_REASONS),
  error: z.nullable(z.string()),
  /** The validated final answer of a run with an output schema; null otherwise. */
  output: z.nullable(z.unknown()),
  finishedAt: z.number(),
})

/**
 * A model call about to be made, persisted before it is (like a side effect's `started`): a
 * record read back from storage means the answer was lost, and the call is counted.
 */
export const ModelCallSchema = z.object({
  /** The step the call is for. */
  step: z.number(),
  /** 1 for the step's first call; one more for each call whose answer was lost. */
  attempt: z.number(),
  /** Estimated prompt tokens of the request. */
  promptTokens: z.number(),
  startedAt: z.number(),
})

export const RunStateSchema = z.object({
  v: z.literal(RUN_STATE_VERSION),
  id: z.string(),
  task: z.string(),
  protocol: z.enum(PROTOCOLS),
  /** `auto` may fall back from native to text when the provider rejects tools. */
  protocolSetting: z.enum(PROTOCOL_SETTINGS),
  tools: z.array(z.string()),
  budget: BudgetSchema,
  policy: PolicySchema,
  phase: z.enum(PHASES),
  steps: z.array(StepSchema),
  usage: UsageSchema,
  activeMs: z.number(),
  /** Failed steps in a row, of every kind (unparsable, all calls failed, loop-guarded). */
  consecutiveErrors: z.number(),
  cancelRequested: z.boolean(),
  /** Who cancelled and why, for the trace (`cancelled by api:alice: wrong incident`). */
  cancelReason: z.nullable(z.string()),
  createdAt: z.number(),
  model: z.nullable(z.string()),
  modelCall: z.nullable(ModelCallSchema),
  result: z.nullable(RunOutcomeSchema),
  /** The earlier runs this one continues (their history, frozen at creation); null: none. */
  conversation: z.nullable(ConversationSchema),
  /** The agent as the run copied it when it started (version 4). */
  agent: AgentSnapshotSchema,
  /** A child run: the run and call that started it; null for a run nobody delegated to. */
  parent: z._default(z.nullable(ParentRefSchema), null),
  /** Every guardrail verdict, in order (docs/guardrails.md); absent in runs saved before them. */
  guardrails: z._default(z.array(GuardrailRecordSchema), []),
})
export type RunState = z.infer<typeof RunStateSchema>
export type Phase = RunState['phase']
export type ModelCall = z.infer<typeof ModelCallSchema>

export interface NewRunInput {
  id?: string
  task: string
  tools: string[]
  protocol?: 'auto' | 'text' | 'native'
  budget?: Partial<Budget>
  policy?: ConfirmPolicy
  now?: number
  /** The conversation this run continues (`continueConversation`). */
  conversation?: Conversation
  /** The run's agent (instructions, output schema, model); none: the default agent. */
  agent?: AgentInput
  /** The run that delegated this one (docs/agents.md#delegation). */
  parent?: ParentRef
}

/**
 * A fresh run in the `think` phase. Throws `KernelUsageError` when a tool's name cannot be sent
 * as a native function name and the run may use the native protocol (`auto` or `native`).
 */
export function createRunState(input: NewRunInput): RunState {
  const protocolSetting = input.protocol ?? 'auto'
  const policy = input.policy ?? { mode: 'ask' }
  if (protocolSetting !== 'text') {
    const refused = input.tools.filter((name) => !NATIVE_TOOL_NAME_PATTERN.test(name))
    if (refused.length) {
      throw new KernelUsageError(
        `tool ${refused.map((n) => `"${n}"`).join(', ')}: the chat-completions API refuses function names outside ${NATIVE_TOOL_NAME_PATTERN}; rename the tool, or run it with protocol "text" (which takes Unicode names)`,
        'tool_name_not_native',
      )
    }
  }
  return {
    v: RUN_STATE_VERSION,
    id: input.id ?? crypto.randomUUID(),
    task: input.task,
    protocol: protocolSetting === 'text' ? 'text' : 'native',
    protocolSetting,
    tools: input.tools,
    budget: { ...DEFAULT_BUDGET, ...input.budget },
    policy,
    phase: 'think',
    steps: [],
    usage: noUsage(),
    activeMs: 0,
    consecutiveErrors: 0,
    cancelRequested: false,
    cancelReason: null,
    createdAt: input.now ?? Date.now(),
    model: null,
    modelCall: null,
    result: null,
    conversation: input.conversation ?? null,
    agent: agentSnapshot(input.agent, { tools: input.tools, protocol: protocolSetting, policy }),
    parent: input.parent ?? null,
    guardrails: [],
  }
}

/** Usage of a run that has made no model call yet. */
export function noUsage(): Usage {
  return {
    promptTokens: 0,
    completionTokens: 0,
    estimated: false,
    costUsd: null,
    cachedPromptTokens: 0,
    modelCalls: 0,
    lostModelCalls: 0,
    lostPromptTokens: 0,
  }
}

/** Validates persisted or received state, migrating older versions; the error lists problems. */
export function parseRunState(value: unknown): Outcome<{ state: RunState }> {
  const parsed = z.safeParse(RunStateSchema, migrateRunState(value))
  if (parsed.success) return { ok: true, state: parsed.data }
  const problems = parsed.error.issues
    .slice(0, 10)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.code}`)
  return { ok: false, error: `invalid run state: ${problems.join('; ')}` }
}
