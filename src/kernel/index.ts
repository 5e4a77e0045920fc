// The kernel's public surface. Files inside src/kernel import each other directly.

// Running a run
export { react, type ReactOptions } from './react'
export { advance, runSlice, transition, type SliceEnd, type SliceResult } from './machine'
export {
  Slice,
  type Action,
  type Deps,
  type Follows,
  type Pricing,
  type Transition,
  type TransitionEvent,
} from './transition'
export {
  toRunResult,
  type RunResult,
  type TraceCall,
  type TraceStep,
  type TraceUsage,
} from './trace'

// State
export { findCall } from './calls'
export {
  createRunState,
  parseRunState,
  RUN_STATE_VERSION,
  type Approval,
  type Call,
  type NewRunInput,
  type Phase,
  type RunState,
  type Step,
  type Usage,
} from './state'
export type { Outcome } from './outcome'

// Conversations
export {
  continueConversation,
  conversationHandle,
  conversationView,
  followUpSource,
  splitConversationHandle,
  type ConversationView,
  type FollowUpSource,
} from './conversation'
export type { Conversation, Turn } from './conversation-schema'

// Approvals and the confirm policy
export {
  decideApproval,
  expireApprovals,
  nextApprovalExpiry,
  pendingApprovals,
  type DecideInput,
  type DecideOutcome,
  type DecideRefusal,
  type Decision,
  DECIDE_REFUSALS,
} from './approvals'
export {
  CONFIRM_MODES,
  narrowPolicy,
  verdictFor,
  type ConfirmHook,
  type ConfirmMode,
  type ConfirmPolicy,
  type ConfirmVerdict,
} from './confirm'
export { argsHash, canonicalJson, sameJson } from './canonical'

// Pending items: what a call waits for from a person (approval, question, connect)
export { itemHash, personNeeded, type PersonNeeded } from './pending-items'
export { answerProblems, checkEditedArgs, type ArgsRefusal } from './person-input'
export {
  PENDING_KINDS,
  type ArgsEdit,
  type PendingItem,
  type PendingKind,
  type PersonAsk,
} from './state'
export type {
  AgentPolicy,
  CodePolicy,
  PersonRequest,
  PolicyCall,
  PolicyContext,
  PolicyVerdict,
  ResolvedItem,
} from './tool'
export { decidePolicy } from './code-policy'
export type { CallPolicy, PolicyVerdictRecord } from './state'

// Budgets
export {
  BudgetSchema,
  CPU_NS_PER_BYTE,
  DEFAULT_BUDGET,
  sliceForCpuMs,
  STOP_REASONS,
  type Budget,
  type EdgeSlice,
  type StopReason,
} from './budget'

// Tools
export {
  defineTool,
  DEFAULT_TOOL_TIMEOUT_MS,
  type CheckContext,
  type ObservationStore,
  type ParamsSchema,
  type Tool,
  type ToolContext,
  type ToolDefinition,
} from './tool'
export { ToolRegistry } from './registry'
export {
  dispatch,
  type DispatchContext,
  type Dispatched,
  type DispatchKind,
  type ToolCallRequest,
} from './dispatch'
export {
  MAX_SLICE_CHARS,
  MemoryObservationStore,
  READ_OBSERVATION,
  readObservationTool,
} from './read-observation'
export { MAX_CALLS_PER_STEP } from './reply'
export { RUN_ID_PATTERN, TOOL_NAME_PATTERN } from './names'

// Models and the prompt
export type {
  ChatMessage,
  FinishReason,
  Model,
  ModelRequest,
  ModelResponse,
  ModelUsage,
  NativeToolCall,
  Protocol,
  ToolSchema,
} from './model'
export { KernelUsageError } from '../errors/kernel-usage-error'
export { ModelError } from '../errors/model-error'
export { buildRequest, RenderCache, type BuiltRequest } from './context'
export { createRedactor, MIN_SECRET_LENGTH, type Redactor } from '../security/redactor'
export { approxTokens, truncateObservation, type Truncated } from './tokens'

// Reading model output
export {
  FINISH,
  MAX_LOOSE_JSON_CHARS,
  parseArgsStrict,
  parseArgsTolerant,
  parseOutput,
  scanJsonObjects,
  TEXT_PROTOCOL_FORMAT,
  toolShapes,
  UNPARSABLE,
  type ParsedCall,
  type ParsedOutput,
  type ParseOptions,
  type StrictArgs,
  type TolerantArgs,
  type ToolShape,
  type ToolShapes,
} from './parse/index'
export {
  GUARDRAIL_POINTS,
  GuardrailRecordSchema,
  type Guardrail,
  type GuardrailContext,
  type GuardrailPoint,
  type GuardrailRecord,
  type GuardrailVerdict,
  type RunGuardrails,
} from './guardrails/guardrail'
export { judgedGuardrail, type JudgedGuardrailOptions } from './guardrails/judge'
export { piiRedaction, redactPii } from './guardrails/pii'
export { secretsGuardrail } from './guardrails/secrets'
export {
  promptInjection,
  injectionFound,
  type PromptInjectionOptions,
} from './guardrails/prompt-injection'
export { answerLength, type AnswerLengthOptions } from './guardrails/answer-length'
export { topicAllowList, type TopicAllowListOptions } from './guardrails/topics'
export type { AgentGuardrails, GuardrailSpec } from './guardrails/spec'
export { createSplitRedactor } from '../security/redactor'
