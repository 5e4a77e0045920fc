import type { EvalCase } from '../../agents/define-eval'
import type { Recording } from './recording'

/**
 * The case `--from-run` writes: the recorded task, expectations the recorded run meets (its
 * result, and its calls in order), the approvals as they were decided, and the recording itself
 * for `--replay` and `--remodel`.
 */
export function caseFromRecording(rec: Recording): EvalCase {
  const calls = rec.steps.flatMap((s) => s.calls)
  const approvals: Record<string, 'approve' | 'deny'> = {}
  for (const c of calls)
    if (c.decision) approvals[c.name] = c.decision === 'approved' ? 'approve' : 'deny'
  return {
    name: `run-${rec.runId.replace(/^run_/, '').slice(0, 12)}`,
    task: rec.task,
    metadata: { recordedFrom: rec.runId },
    ...(Object.keys(approvals).length ? { approvals } : {}),
    expect: {
      ok: rec.result.ok,
      ...(rec.result.ok ? {} : { stopReason: rec.result.stopReason }),
      ...(calls.length ? { toolOrder: calls.map((c) => ({ name: c.name, args: c.args })) } : {}),
      ...(rec.result.output !== null && rec.result.output !== undefined
        ? { output: rec.result.output }
        : {}),
    },
    recording: rec,
  }
}
