import type { FakeReply } from '../../fakes/fake-openai'
import type { RunView } from '../../../src/runs/types'
import type { CrashSession } from './crash-session'
import { checkRun, type RunEvidence, type Violation } from './invariants'
import { readEvents } from './event-stream'

export interface Judged {
  evidence: RunEvidence
  violations: Violation[]
}

/** Gathers what the session saw of one run (after `drive`) and checks every invariant. */
export async function judge(
  session: CrashSession,
  run: { id: string; task: string; tag: string; script: FakeReply[]; callback?: boolean },
  view: RunView | undefined,
): Promise<Judged> {
  const result = view && !session.down ? await session.trace(run.id) : undefined
  const evidence: RunEvidence = {
    runId: run.id,
    task: run.task,
    tag: run.tag,
    script: run.script,
    idempotentPost: session.bindings.HTTP_POST_IDEMPOTENT === 'true',
    view,
    result,
    requests: session.network.requests,
    kills: session.kills,
    observations: session.observations.get(run.id) ?? [],
    modelViolations: session.model.violations,
    ...(view ? { events: await readEvents(session, run.id) } : {}),
    ...(run.callback ? { callback: true } : {}),
  }
  const violations = checkRun(evidence)
  for (const u of session.network.unexpected) {
    violations.push({ kind: 'protocol', detail: `unexpected request ${u}` })
  }
  return { evidence, violations }
}
