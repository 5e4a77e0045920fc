import * as z from 'zod/mini'
import { CATALOG } from '../../tools/catalog'
import { sameJson } from '../kernel/canonical'
import type { ConfirmHook, ConfirmPolicy } from '../kernel/confirm'
import type { Model, ModelRequest, ModelResponse } from '../kernel/model'
import { react } from '../kernel/react'
import { READ_OBSERVATION } from '../kernel/read-observation'
import type { RunState } from '../kernel/state'
import { defineTool, type Tool } from '../kernel/tool'
import { ModelError } from '../errors/model-error'
import { sha256Hex } from '../security/sha256'
import type { RecordedCall, RecordedRequest, Recording } from './recording'

export interface ReplayOptions {
  /** The agent's instructions now (a prompt change shows as a diff); default: as recorded. */
  instructions?: string | null
  /** Re-model: a new model decides; default: the recorded replies, in order. */
  model?: Model
  /**
   * Re-model only: read-only tools the recording has no result for run for real (the catalog's
   * tools that need no settings). Side effects never run: they get their recorded result or none.
   */
  liveReads?: boolean
}

/** A replayed run: its final state and what it sent the model at each step. */
export interface Replayed {
  state: RunState
  requests: RecordedRequest[]
}

/**
 * Runs the recording again through the kernel (the same step machine the Worker runs): the model
 * is the recorded replies (or `options.model`), every tool answers with its recorded result, and
 * each side effect is decided as it was. Nothing leaves the process (docs/evals.md#replay).
 */
export async function replay(rec: Recording, options: ReplayOptions = {}): Promise<Replayed> {
  const requests: Promise<RecordedRequest>[] = []
  const inner: Model = options.model ?? recordedModel(rec)
  const model: Model = {
    name: inner.name,
    complete: (request: ModelRequest) => {
      requests.push(digest(request))
      return inner.complete(request)
    },
  }
  const calls = rec.steps.flatMap((s) => s.calls)
  const recorded = (id: string, name: string, args: Record<string, unknown>) => {
    const same = calls.find((c) => c.id === id && c.name === name && sameJson(c.args, args))
    return same ?? calls.find((c) => c.name === name && sameJson(c.args, args))
  }
  const tools = rec.tools
    .filter((n) => n !== READ_OBSERVATION)
    .map((n) => standIn(n, calls, recorded, options))
  const ask =
    rec.policy.mode === 'ask' || (rec.policy.mode === 'allowlist' && calls.some((c) => c.decision))
  const hook: ConfirmHook = (call) =>
    recorded(call.id, call.name, call.args)?.decision === 'approved'
  const confirm: ConfirmPolicy | ConfirmHook = ask ? hook : rec.policy
  let last: RunState | undefined
  const instructions = options.instructions === undefined ? rec.instructions : options.instructions
  await react(rec.task, tools, {
    model,
    confirm,
    protocol: rec.protocolSetting,
    budget: rec.budget,
    ...(instructions ? { instructions } : {}),
    ...(rec.output ? { output: rec.output } : {}),
    onState: (s) => (last = s),
  })
  return { state: last!, requests: await Promise.all(requests) }
}

/** The recorded replies, one per turn; a turn past them is a model error (the diff says why). */
function recordedModel(rec: Recording): Model {
  return {
    name: 'replay',
    complete: async (request: ModelRequest): Promise<ModelResponse> => {
      const turn = request.messages.filter((m) => m.role === 'assistant').length
      const step = rec.steps[turn]
      if (!step) {
        throw new ModelError(
          `the recording has ${rec.steps.length} replies; the replay asked for reply ${turn + 1}`,
          { code: 'script_exhausted' },
        )
      }
      return step.reply
    },
  }
}

/**
 * A tool that answers with the recording: the catalog's own definition (description, schema,
 * side effect) where it has one, so the model is offered what the deployment offered.
 */
function standIn(
  name: string,
  calls: readonly RecordedCall[],
  recorded: (id: string, name: string, args: Record<string, unknown>) => RecordedCall | undefined,
  options: ReplayOptions,
): Tool {
  const entry = CATALOG.find((e) => e.name === name)
  const real = entry && !('build' in entry) ? entry : undefined
  const sideEffect =
    real?.sideEffect ??
    calls.some(
      (c) =>
        c.name === name &&
        (c.decision !== null || c.kind === 'denied' || c.kind === 'outcome_unknown'),
    )
  return defineTool({
    name,
    description: real?.description ?? `${name} (recorded)`,
    params: real?.params ?? z.looseObject({}),
    returns: real?.returns ?? 'What the recorded run got.',
    sideEffect,
    idempotent: real?.idempotent ?? false,
    handler: (args, ctx) => {
      const found = recorded(ctx.callId, name, args as Record<string, unknown>)
      if (found) return found.observation
      if (options.liveReads && real && !real.sideEffect) return real.handler(args as never, ctx)
      return `[ToolError] ${name} was not called with these arguments in the recorded run, so it has no result here (a replay runs no tool${sideEffect ? '; side effects never run' : ''}).`
    },
  })
}

async function digest(request: ModelRequest): Promise<RecordedRequest> {
  const [first, ...rest] = request.messages
  const system = first?.role === 'system' ? String(first.content) : ''
  return {
    system,
    messages: await sha256Hex(JSON.stringify(first?.role === 'system' ? rest : request.messages)),
    tools: await sha256Hex(JSON.stringify(request.tools ?? [])),
  }
}
