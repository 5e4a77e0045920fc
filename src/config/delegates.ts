/**
 * Delegation between agents (docs/agents.md#delegation), checked where agents are checked: a
 * delegate that is not an agent of this deployment, or a cycle of delegates, is a configuration
 * problem naming the agent (`/readyz` answers 503), never a run that loops at depth.
 */
import { delegateTool, delegateToolName } from '../kernel/delegation'
import type { Tool } from '../kernel/tool'

/** What delegation looks at of an agent. */
interface Delegating {
  name: string
  description: string
  /** Null: every enabled tool (and every MCP server's). */
  tools: string[] | null
  delegates: string[]
}

/** Unknown delegates, delegate tool names a real tool already has, and cycles. */
export function delegationProblems(
  agents: readonly Delegating[],
  enabledTools: readonly string[],
): { agent: string; field: string; message: string }[] {
  const problems: { agent: string; field: string; message: string }[] = []
  const byName = new Map(agents.map((a) => [a.name, a]))
  for (const agent of agents) {
    const unknown = agent.delegates.filter((d) => !byName.has(d))
    if (unknown.length) {
      problems.push({
        agent: agent.name,
        field: 'delegates',
        message: `${unknown.join(', ')}: not ${unknown.length > 1 ? 'agents' : 'an agent'} of this deployment (ENABLED_AGENTS gives ${[...byName.keys()].join(', ')})`,
      })
    }
    const clash = agent.delegates.map(delegateToolName).filter((t) => enabledTools.includes(t))
    if (clash.length) {
      problems.push({
        agent: agent.name,
        field: 'delegates',
        message: `${clash.join(', ')} is a tool's name already; rename the tool`,
      })
    }
  }
  const cycle = findCycle(agents, byName)
  if (cycle) {
    problems.push({
      agent: cycle[0]!,
      field: 'delegates',
      message: `delegation cycle ${cycle.join(' → ')}; an agent may not reach itself`,
    })
  }
  return problems
}

/** The first cycle of delegates (its agents, the first repeated at the end), or undefined. */
function findCycle(
  agents: readonly Delegating[],
  byName: Map<string, Delegating>,
): string[] | undefined {
  const done = new Set<string>()
  const path: string[] = []
  const visit = (name: string): string[] | undefined => {
    const at = path.indexOf(name)
    if (at >= 0) return [...path.slice(at), name]
    if (done.has(name)) return undefined
    path.push(name)
    for (const next of byName.get(name)?.delegates ?? []) {
      const found = visit(next)
      if (found) return found
    }
    path.pop()
    done.add(name)
    return undefined
  }
  for (const agent of agents) {
    const found = visit(agent.name)
    if (found) return found
  }
  return undefined
}

/**
 * The `ask_<agent>` tool of every agent some agent delegates to. An agent that can cause a side
 * effect (a side-effecting tool, any MCP tool, or such a delegate of its own) makes its tool a
 * side-effecting delegate: one call at a time, in the model's order.
 */
export function delegateTools(agents: readonly Delegating[], tools: readonly Tool[]): Tool[] {
  const byName = new Map(agents.map((a) => [a.name, a]))
  const memo = new Map<string, boolean>()
  const sideEffects = (name: string): boolean => {
    const known = memo.get(name)
    if (known !== undefined) return known
    memo.set(name, true) // a cycle is refused before this runs; be strict if one slipped in
    const agent = byName.get(name)
    const own = agent?.tools ?? null
    const risky =
      !agent ||
      own === null ||
      own.some((t) => tools.find((x) => x.name === t)?.sideEffect ?? true) ||
      agent.delegates.some(sideEffects)
    memo.set(name, risky)
    return risky
  }
  const wanted = new Set(agents.flatMap((a) => a.delegates))
  return [...wanted]
    .filter((name) => byName.has(name))
    .map((name) => {
      const agent = byName.get(name)!
      return delegateTool(agent.name, agent.description, sideEffects(name))
    })
}
