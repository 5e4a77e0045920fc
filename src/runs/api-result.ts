import { toRunResult } from '../kernel/trace'
import type { RunState } from '../kernel/state'
import type { RunResultBody } from '../api/response-schemas'

/** An approval, a trace call and the trace as the API shows them: `argsHash`, ISO 8601 times. */
export type ApiApproval = NonNullable<ApiTraceCall['approval']>
export type ApiTraceCall = ApiRunResult['steps'][number]['calls'][number]
export type ApiRunResult = RunResultBody

/** A tool the run does not have although its MCP server was asked for it, and why. */
export type SkippedTool = NonNullable<RunResultBody['skippedTools']>[number]

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
