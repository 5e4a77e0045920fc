import type { Env } from '../../env'
import { runStub, type RunView } from '../../runs/types'

/** How many levels of children a view asks at most (MAX_DELEGATION_DEPTH is at most 10). */
const MAX_LEVELS = 10

/**
 * A run's view with its family as it stands now (docs/agents.md#delegation): each unfinished
 * child's own status (a child may be waiting for a person while its parent's record says only
 * that it runs), and the pending approvals of every descendant, each naming its run and agent
 * (decided on that run: `POST /v1/runs/<child>/approvals/<call>`).
 */
export async function withFamily(env: Env, view: RunView, level = 0): Promise<RunView> {
  const open = view.children.filter((c) => c.status !== 'succeeded' && c.status !== 'failed')
  if (!open.length || level >= MAX_LEVELS) return view
  const views = await Promise.all(
    open.map(async (c) => {
      const child = await runStub(env.RUNS, c.runId).get()
      return child ? withFamily(env, child, level + 1) : null
    }),
  )
  const byId = new Map(views.filter((v) => v !== null).map((v) => [v.id, v]))
  const descendantApprovals = [...view.descendantApprovals]
  for (const child of byId.values()) {
    const agent = child.agent.name
    for (const a of child.pendingApprovals)
      descendantApprovals.push({ runId: child.id, agent, ...a })
    descendantApprovals.push(...child.descendantApprovals)
  }
  return {
    ...view,
    children: view.children.map((c) => {
      const live = byId.get(c.runId)
      return live ? { ...c, status: live.status } : c
    }),
    descendantApprovals,
  }
}
