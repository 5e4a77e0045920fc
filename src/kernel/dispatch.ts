import { safeParse } from 'zod/v4/core'
import { canonicalJson } from './canonical'
import { verdictFor, type ConfirmHook, type ConfirmPolicy } from './confirm'
import { describeIssues } from '../validation/describe-issues'
import type { ToolRegistry } from './registry'
import type { ObservationStore, Tool, ToolContext } from './tool'
import { approxTokens, truncateObservation } from './tokens'

/** A call as the step machine hands it to `dispatch`. */
export interface ToolCallRequest {
  id: string
  name: string
  args: Record<string, unknown>
  /** Set when the model's argument text could not be turned into an object. */
  argsError?: string
}

export interface DispatchContext {
  registry: ToolRegistry
  runId: string
  observations: ObservationStore
  policy: ConfirmPolicy
  /** Decides `ask` verdicts in memory when no human is waiting (react()). */
  confirm?: ConfirmHook
  /** A person approved exactly this call (the step machine checked the argument hash). */
  approved?: boolean
  /** Run-level cancellation; each tool also gets its own timeout. */
  signal?: AbortSignal
  /** Observations longer than this are truncated (and stored whole by handle). Default 2000. */
  maxObservationTokens?: number
  now?: () => number
}

export type DispatchKind = 'ok' | 'tool_error' | 'dry_run' | 'outcome_unknown'

export interface DispatchResult {
  observation: string
  kind: DispatchKind
  /** Characters in the observation before truncation. */
  originalSize: number
  /** Estimated tokens of `observation`. */
  tokens: number
  truncated: boolean
  /** Set when the whole observation was stored for `read_observation`. */
  handle?: string
  ms: number
}

export const DEFAULT_MAX_OBSERVATION_TOKENS = 2000

/** Runs one tool call and returns what the model should see. Never throws (DESIGN §1.1). */
export async function dispatch(call: ToolCallRequest, ctx: DispatchContext): Promise<string> {
  return (await dispatchCall(call, ctx)).observation
}

/** `dispatch` with the details the trace records. Never throws. */
export async function dispatchCall(
  call: ToolCallRequest,
  ctx: DispatchContext,
): Promise<DispatchResult> {
  return dispatchNow(call, ctx)
}

type Outcome = { text: string; kind: DispatchKind }

/**
 * `dispatchCall` without a promise when nothing in the call is asynchronous (a synchronous
 * read-only tool): the step machine's hot path, where each promise layer is measurable
 * (npm run bench). Never throws, and a promise it returns never rejects.
 */
export function dispatchNow(
  call: ToolCallRequest,
  ctx: DispatchContext,
): DispatchResult | Promise<DispatchResult> {
  const now = ctx.now ?? Date.now
  const started = now()
  let outcome: Outcome | Promise<Outcome>
  try {
    outcome = runCall(call, ctx)
  } catch (err) {
    outcome = lastDefence(call, err)
  }
  if (isThenable(outcome)) {
    return outcome.then(
      (o) => finishObservation(call, o, Math.max(0, now() - started), ctx),
      (err: unknown) =>
        finishObservation(call, lastDefence(call, err), Math.max(0, now() - started), ctx),
    )
  }
  return finishObservation(call, outcome, Math.max(0, now() - started), ctx)
}

// runCall already turns tool failures into observations; this is the last line of defence.
function lastDefence(call: ToolCallRequest, err: unknown): Outcome {
  return { text: `[ToolError] ${call.name} failed: ${describeThrown(err)}`, kind: 'tool_error' }
}

function runCall(call: ToolCallRequest, ctx: DispatchContext): Outcome | Promise<Outcome> {
  const tool = ctx.registry.get(call.name)
  if (!tool) {
    return toolError(
      `unknown tool "${call.name}". Available tools: ${ctx.registry.names().join(', ')}`,
    )
  }
  if (call.argsError) {
    return toolError(
      `${tool.name}: ${call.argsError}${tool.sideEffect ? ' The call was not executed.' : ''} ` +
        `Send the arguments as one JSON object matching: ${JSON.stringify(ctx.registry.jsonSchema(tool.name))}`,
    )
  }
  const parsed = safeParse(tool.params, call.args)
  if (!parsed.success) {
    const problems = describeIssues(parsed.error.issues, call.args)
    return toolError(
      `invalid arguments for ${tool.name}:\n${problems.map((p) => `- ${p}`).join('\n')}\n` +
        `Schema: ${JSON.stringify(ctx.registry.jsonSchema(tool.name))}`,
    )
  }
  if (!tool.sideEffect) return invoke(tool, parsed.data, call, ctx)
  const refusal = confirmSideEffect(call, tool, ctx)
  if (isThenable(refusal)) {
    return refusal.then((r) => r ?? invoke(tool, parsed.data, call, ctx))
  }
  return refusal ?? invoke(tool, parsed.data, call, ctx)
}

function confirmSideEffect(
  call: ToolCallRequest,
  tool: Tool,
  ctx: DispatchContext,
): Outcome | undefined | Promise<Outcome | undefined> {
  const verdict = verdictFor(ctx.policy, tool)
  if (verdict === 'run') return undefined
  if (verdict === 'dry_run') {
    return {
      text: `[DryRun] ${tool.name} was not run (dry-run policy). It would have been called with ${canonicalJson(call.args)}.`,
      kind: 'dry_run',
    }
  }
  if (verdict === 'ask') {
    if (ctx.approved) return undefined
    if (ctx.confirm) return askHook(call, tool, ctx.confirm)
  }
  return toolError(
    `${tool.name} has side effects and is not permitted here (confirm policy "${ctx.policy.mode}"). ` +
      'Use read-only tools instead, or ask the user for permission.',
  )
}

async function askHook(
  call: ToolCallRequest,
  tool: Tool,
  confirm: ConfirmHook,
): Promise<Outcome | undefined> {
  let allowed = false
  try {
    allowed = await confirm({ id: call.id, name: call.name, args: call.args }, tool)
  } catch (err) {
    return toolError(`${tool.name}: the approval hook failed (${describeThrown(err)}); not run.`)
  }
  if (allowed) return undefined
  return toolError(
    `${tool.name} was denied by the approver. Use read-only tools instead, or ask the user for permission.`,
  )
}

function invoke(
  tool: Tool,
  args: unknown,
  call: ToolCallRequest,
  ctx: DispatchContext,
): Outcome | Promise<Outcome> {
  if (ctx.signal?.aborted) return toolError(`${tool.name} was not run: the run was cancelled`)
  const toolCtx = new CallContext(
    ctx.runId,
    call.id,
    ctx.observations,
    ctx.maxObservationTokens ?? DEFAULT_MAX_OBSERVATION_TOKENS,
    ctx.signal,
  )
  let pending: unknown
  try {
    pending = tool.handler(args as never, toolCtx)
  } catch (err) {
    return toolError(`${tool.name} failed: ${describeThrown(err)}`)
  }
  // A synchronous result needs no timer and no promise: it is already here.
  if (!isThenable(pending)) return rendered(tool, pending)
  return settle(tool, pending, toolCtx, ctx)
}

/**
 * What a handler receives. A class, not an object literal with a getter: on V8 such a literal is
 * built on a slow path that costs about 1 µs and 700 bytes per call (npm run bench).
 */
class CallContext implements ToolContext {
  readonly idempotencyKey: string
  #controller: AbortController | undefined
  readonly #runSignal: AbortSignal | undefined
  constructor(
    readonly runId: string,
    readonly callId: string,
    readonly observations: ObservationStore,
    readonly maxObservationTokens: number,
    runSignal: AbortSignal | undefined,
  ) {
    this.idempotencyKey = `${runId}:${callId}`
    this.#runSignal = runSignal
  }

  // Made on first use: most read-only tools never look at it, and an AbortController per call
  // is a measurable share of a step's CPU.
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController()
      if (this.#runSignal?.aborted) this.#controller.abort(this.#runSignal.reason)
    }
    return this.#controller.signal
  }

  /** Aborts a handler's signal (its timeout, or the run's cancel); not a method handlers see. */
  static abort(ctx: CallContext, reason: unknown): void {
    ctx.#controller?.abort(reason)
  }
}

/** Waits for an asynchronous handler, within its timeout and the run's cancellation. */
async function settle(
  tool: Tool,
  pending: PromiseLike<unknown>,
  toolCtx: CallContext,
  ctx: DispatchContext,
): Promise<Outcome> {
  const onRunAbort = () => CallContext.abort(toolCtx, ctx.signal?.reason)
  ctx.signal?.addEventListener('abort', onRunAbort, { once: true })
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), tool.timeoutMs)
  })
  try {
    const result = await Promise.race([pending, timeout])
    if (result === TIMED_OUT) {
      CallContext.abort(toolCtx, new Error(`${tool.name} timed out after ${tool.timeoutMs}ms`))
      if (tool.sideEffect) {
        // The request may have landed before the timeout: never invite a blind retry.
        return {
          text:
            `[ToolError] ${tool.name} timed out after ${tool.timeoutMs}ms; its outcome is unknown ` +
            '(it may have taken effect). Check its effect before retrying.',
          kind: 'outcome_unknown',
        }
      }
      return toolError(`${tool.name} timed out after ${tool.timeoutMs}ms`)
    }
    return rendered(tool, result)
  } catch (err) {
    return toolError(`${tool.name} failed: ${describeThrown(err)}`)
  } finally {
    if (timer !== undefined) clearTimeout(timer)
    ctx.signal?.removeEventListener('abort', onRunAbort)
  }
}

const TIMED_OUT: unique symbol = Symbol('timed out')

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  )
}

function rendered(tool: Tool, result: unknown): Outcome {
  try {
    return { text: render(result), kind: 'ok' }
  } catch (err) {
    return toolError(
      `${tool.name} returned a result that could not be serialized: ${describeThrown(err)}`,
    )
  }
}

function finishObservation(
  call: ToolCallRequest,
  outcome: Outcome,
  ms: number,
  ctx: DispatchContext,
): DispatchResult | Promise<DispatchResult> {
  const limit = ctx.maxObservationTokens ?? DEFAULT_MAX_OBSERVATION_TOKENS
  const cut = truncateObservation(outcome.text, limit)
  const result: DispatchResult = {
    observation: cut.text,
    kind: outcome.kind,
    originalSize: cut.originalSize,
    tokens: cut.tokens,
    truncated: cut.truncated,
    ms,
  }
  if (!cut.truncated) return result
  const handle = `obs_${call.id}`
  const stored = () => {
    const note =
      `\n[observation truncated: ${cut.originalSize} characters in all; handle "${handle}". ` +
      'Call read_observation with this handle, an offset and a length to read the rest.]'
    result.observation = cut.text + note
    result.tokens = approxTokens(result.observation)
    result.handle = handle
    return result
  }
  // Storage failed: still tell the model the truth, without a handle it cannot use.
  const unstored = () => result
  try {
    return Promise.resolve(ctx.observations.put(handle, outcome.text)).then(stored, unstored)
  } catch {
    return unstored()
  }
}

function toolError(message: string): Outcome {
  return { text: `[ToolError] ${message}`, kind: 'tool_error' }
}

function render(result: unknown): string {
  if (typeof result === 'string') return result
  if (result === undefined) return '(no output)'
  return JSON.stringify(result) ?? String(result)
}

/** `<Type>: <message>` for anything thrown (errors, strings, objects). */
export function describeThrown(err: unknown): string {
  if (err instanceof Error) return `${err.name || 'Error'}: ${err.message}`
  if (typeof err === 'string') return `Error: ${err}`
  try {
    return `${typeof err}: ${JSON.stringify(err)}`
  } catch {
    return `${typeof err}: ${String(err)}`
  }
}
