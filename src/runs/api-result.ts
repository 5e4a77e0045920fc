import { toRunResult, type RunResult, type TraceCall } from '../kernel/trace'
import type { Approval, RunState } from '../kernel/state'
import type { OutboxEntry } from './outbox'

/** An approval as the API shows it: `argsHash` (one spelling everywhere), ISO 8601 times. */
export type ApiApproval = Omit<Approval, 'hash' | 'requestedAt' | 'expiresAt' | 'decidedAt'> & {
  argsHash: string
  requestedAt: string
  expiresAt: string
  decidedAt: string | null
}

export type ApiTraceCall = Omit<TraceCall, 'approval'> & { approval?: ApiApproval }

/** A tool the run does not have although its MCP server was asked for it, and why. */
export interface SkippedTool {
  tool: string
  reason: string
}

/** The kernel's RunResult with the API's spellings (the kernel keeps epoch ms and `hash`). */
export type ApiRunResult = Omit<RunResult, 'steps'> & {
  steps: (Omit<RunResult['steps'][number], 'calls'> & { calls: ApiTraceCall[] })[]
  /** MCP tools left out of the run (present only when there are some). */
  skippedTools?: SkippedTool[]
}

/** A delivery as the API shows it: no payload, times in ISO 8601. */
export type ApiDelivery = Omit<OutboxEntry, 'payload' | 'result' | 'nextAt' | 'updatedAt'> & {
  nextAt: string
  updatedAt: string
}

const iso = (ms: number) => new Date(ms).toISOString()

/** `GET /v1/runs/:id/trace`, the run view's `result` and the callback's body. */
export function toApiResult(state: RunState, skippedTools: SkippedTool[] = []): ApiRunResult {
  const result = toRunResult(state)
  return {
    ...result,
    ...(skippedTools.length ? { skippedTools } : {}),
    steps: result.steps.map((step) => ({
      ...step,
      calls: step.calls.map(({ approval, ...call }) => {
        if (!approval) return call
        const { hash, requestedAt, expiresAt, decidedAt, ...rest } = approval
        return {
          ...call,
          approval: {
            argsHash: hash,
            requestedAt: iso(requestedAt),
            expiresAt: iso(expiresAt),
            ...rest,
            decidedAt: decidedAt === null ? null : iso(decidedAt),
          },
        }
      }),
    })),
  }
}

export function toApiDelivery(entry: OutboxEntry): ApiDelivery {
  const { payload: _p, result: _r, nextAt, updatedAt, ...rest } = entry
  return { ...rest, nextAt: iso(nextAt), updatedAt: iso(updatedAt) }
}
