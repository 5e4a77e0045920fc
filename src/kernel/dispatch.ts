import { askConfirmHook } from './approvals'
import { canonicalJson } from './canonical'
import { verdictFor, type ConfirmHook, type ConfirmPolicy } from './confirm'
import { describeThrown } from './describe-thrown'
import type { ToolRegistry } from './registry'
import { personRequestOf } from './pending-items'
import type { ObservationStore, PersonRequest, ResolvedItem, Tool, ToolContext } from './tool'
import { isPromise, type SyncOrAsync } from './sync-or-async'
import { approxTokens, truncateObservation } from './tokens'
import { checkCall, validateArgs, type ToolCallRequest } from './validate'

export type { ToolCallRequest } from './validate'

export interface DispatchContext {
  registry: ToolRegistry
  runId: string
  observations: ObservationStore
  policy: ConfirmPolicy
  /** Decides `ask` verdicts in memory when no human is waiting (dispatch used on its own). */
  confirm?: ConfirmHook
  /** A person approved exactly this call (the step machine checked the argument hash). */
  approved?: boolean
  /** The question or connection a person resolved for this call (the handler's `person`). */
  person?: ResolvedItem | null
  /** Run-level cancellation; each tool also gets its own timeout. */
  signal?: AbortSignal
  /** Takes secrets out of every observation before it is cut, stored or returned. */
  redact?: (text: string) => string
  /**
   * The tool-output guardrails: what the model sees of the (redacted) observation, before it is
   * cut or stored (act-record.ts; docs/guardrails.md).
   */
  screen?: ((text: string) => SyncOrAsync<string>) | undefined
  /** Observations longer than this are truncated (and stored whole by handle). Default 2000. */
  maxObservationTokens?: number
  now?: () => number
  /**
   * When the call began, as the caller read the clock just before (the step machine: the start
   * of the transition that runs it); unset, dispatch reads it.
   */
  startedAt?: number | undefined
}

export type DispatchKind = 'ok' | 'tool_error' | 'dry_run' | 'outcome_unknown'

/** What one dispatched call gave: the observation the model sees, and what the trace records. */
export interface Dispatched {
  observation: string
  kind: DispatchKind
  /** Characters in the observation before truncation. */
  originalSize: number
  /** Estimated tokens of `observation`. */
  tokens: number
  truncated: boolean
  /** Set when the whole observation was stored for `read_observation`. */
  handle: string | null
  ms: number
  /**
   * The handler returned `personNeeded(…)`: the call waits for a person instead of being
   * answered (the step machine makes the item; `observation` is empty).
   */
  person?: PersonRequest
}

const DEFAULT_MAX_OBSERVATION_TOKENS = 2000

type Observed = { text: string; kind: DispatchKind; person?: PersonRequest }

/**
 * Runs one tool call and returns what the model should see: the security boundary. Permission
 * (side effects), argument validation, the tool's check, its timeout, truncation and storage of
 * the whole observation all happen here and nowhere else. Never throws: every failure is an
 * observation starting with `[ToolError]`. The result comes back at once when the tool answered
 * at once, as a promise when anything waited (sync-or-async.ts): `await` it either way.
 */
export function dispatch(call: ToolCallRequest, ctx: DispatchContext): SyncOrAsync<Dispatched> {
  const started = ctx.startedAt ?? (ctx.now ?? Date.now)()
  let observed: SyncOrAsync<Observed>
  try {
    observed = runCall(call, ctx)
  } catch (err) {
    observed = crashed(call, err)
  }
  if (!isPromise(observed)) return dispatched(call, observed, started, ctx)
  return observed.then(
    (o) => dispatched(call, o, started, ctx),
    (err: unknown) => dispatched(call, crashed(call, err), started, ctx),
  )
}

/** runCall already turns tool failures into observations; this is the last line of defence. */
function crashed(call: ToolCallRequest, err: unknown): Observed {
  return toolError(`${call.name} failed: ${describeThrown(err)}`)
}

/** What the call gave, cut to the run's limit; stored whole when it was cut. */
function dispatched(
  call: ToolCallRequest,
  observed: Observed,
  started: number,
  ctx: DispatchContext,
): SyncOrAsync<Dispatched> {
  const ms = Math.max(0, (ctx.now ?? Date.now)() - started)
  if (observed.person) {
    return { ...observation({ text: '', kind: 'ok' }, ms, ctx), person: observed.person }
  }
  // Whatever the tool said (its output, its error, an echo of a header it was sent) is redacted
  // here, once, so neither the stored whole nor the model's copy can hold a secret.
  if (ctx.redact) observed = { text: ctx.redact(observed.text), kind: observed.kind }
  if (ctx.screen) {
    const kind = observed.kind
    const seen = ctx.screen(observed.text)
    if (isPromise(seen)) return seen.then((text) => cut(call, { text, kind }, ms, ctx))
    observed = { text: seen, kind }
  }
  return cut(call, observed, ms, ctx)
}

/** The observation cut to the run's limit; stored whole when it was cut. */
function cut(
  call: ToolCallRequest,
  observed: Observed,
  ms: number,
  ctx: DispatchContext,
): SyncOrAsync<Dispatched> {
  const result = observation(observed, ms, ctx)
  return result.truncated ? storeWhole(call, observed, result, ctx) : result
}

function runCall(call: ToolCallRequest, ctx: DispatchContext): SyncOrAsync<Observed> {
  const valid = validateArgs(call, ctx.registry)
  if (!valid.ok) return toolError(valid.error)
  const { tool, args } = valid
  const problem = checkCall(tool, args, { runId: ctx.runId, callId: call.id })
  if (problem) return toolError(problem)
  if (!tool.sideEffect) return invoke(tool, args, call, ctx)
  return confirmSideEffect(call, tool, ctx).then(
    (refusal) => refusal ?? invoke(tool, args, call, ctx),
  )
}

async function confirmSideEffect(
  call: ToolCallRequest,
  tool: Tool,
  ctx: DispatchContext,
): Promise<Observed | undefined> {
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
    if (ctx.confirm) {
      const answer = await askConfirmHook(ctx.confirm, call, tool)
      if (answer.allowed) return undefined
      if (answer.failure) {
        return toolError(`${tool.name}: the approval hook failed (${answer.failure}); not run.`)
      }
      return toolError(
        `${tool.name} was denied by the approver. Use read-only tools instead, or ask the user for permission.`,
      )
    }
  }
  return toolError(
    `${tool.name} has side effects and is not permitted here (confirm policy "${ctx.policy.mode}"). ` +
      'Use read-only tools instead, or ask the user for permission.',
  )
}

function invoke(
  tool: Tool,
  args: unknown,
  call: ToolCallRequest,
  ctx: DispatchContext,
): SyncOrAsync<Observed> {
  if (ctx.signal?.aborted) return toolError(`${tool.name} was not run: the run was cancelled`)
  const toolCtx = new CallContext(
    ctx.runId,
    call.id,
    ctx.observations,
    ctx.maxObservationTokens ?? DEFAULT_MAX_OBSERVATION_TOKENS,
    ctx.signal,
    ctx.person ?? null,
  )
  let pending: unknown
  try {
    pending = tool.handler(args as never, toolCtx)
  } catch (err) {
    return toolError(`${tool.name} failed: ${describeThrown(err)}`)
  }
  // A synchronous result needs no timer: it is already here.
  const thenable = typeof (pending as { then?: unknown } | null)?.then === 'function'
  if (!thenable) return rendered(tool, pending)
  return settle(tool, pending as PromiseLike<unknown>, toolCtx, ctx)
}

/** Waits for an asynchronous handler, within its timeout and the run's cancellation. */
async function settle(
  tool: Tool,
  pending: PromiseLike<unknown>,
  toolCtx: CallContext,
  ctx: DispatchContext,
): Promise<Observed> {
  const onRunAbort = () => CallContext.abort(toolCtx, ctx.signal?.reason)
  ctx.signal?.addEventListener('abort', onRunAbort, { once: true })
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), tool.timeoutMs)
  })
  try {
    const result = await Promise.race([pending, timeout])
    if (result !== TIMED_OUT) return rendered(tool, result)
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
  } catch (err) {
    return toolError(`${tool.name} failed: ${describeThrown(err)}`)
  } finally {
    if (timer !== undefined) clearTimeout(timer)
    ctx.signal?.removeEventListener('abort', onRunAbort)
  }
}

const TIMED_OUT: unique symbol = Symbol('timed out')

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
    readonly person: ResolvedItem | null,
  ) {
    this.idempotencyKey = `${runId}:${callId}`
    this.#runSignal = runSignal
  }

  // Made on first use: most read-only tools never look at it.
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

function rendered(tool: Tool, result: unknown): Observed {
  const person = personRequestOf(result)
  if (person) return { text: '', kind: 'ok', person }
  try {
    const text = render(result)
    // A tool that reports failure the seed's way, as text starting with `[ToolError]`, failed:
    // the call's kind agrees with what the model reads, and it counts in the error streak.
    return { text, kind: text.trimStart().startsWith('[ToolError]') ? 'tool_error' : 'ok' }
  } catch (err) {
    return toolError(
      `${tool.name} returned a result that could not be serialized: ${describeThrown(err)}`,
    )
  }
}

function render(result: unknown): string {
  if (typeof result === 'string') return result
  if (result === undefined) return '(no output)'
  return JSON.stringify(result) ?? String(result)
}

/** The observation cut to the run's limit, with what the trace records. */
function observation(observed: Observed, ms: number, ctx: DispatchContext): Dispatched {
  const cut = truncateObservation(
    observed.text,
    ctx.maxObservationTokens ?? DEFAULT_MAX_OBSERVATION_TOKENS,
  )
  return {
    observation: cut.text,
    kind: observed.kind,
    originalSize: cut.originalSize,
    tokens: cut.tokens,
    truncated: cut.truncated,
    handle: null,
    ms,
  }
}

/** A truncated observation is stored whole, and the model told the handle to read it by. */
async function storeWhole(
  call: ToolCallRequest,
  observed: Observed,
  result: Dispatched,
  ctx: DispatchContext,
): Promise<Dispatched> {
  const handle = `obs_${call.id}`
  try {
    await ctx.observations.put(handle, observed.text)
  } catch {
    // Storage failed: still tell the model the truth, without a handle it cannot use.
    return result
  }
  const note =
    `\n[observation truncated: ${result.originalSize} characters in all; handle "${handle}". ` +
    'Call read_observation with this handle, an offset and a length to read the rest.]'
  const text = result.observation + note
  return { ...result, observation: text, tokens: approxTokens(text), handle }
}

function toolError(message: string): Observed {
  return { text: `[ToolError] ${message}`, kind: 'tool_error' }
}
