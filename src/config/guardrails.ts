/**
 * An agent's guardrails (docs/guardrails.md), checked where agents are checked: an unknown point
 * or shipped name, bad options, or a judge naming a model outside MODEL_ALLOWLIST or an agent the
 * deployment does not offer is a configuration problem naming the agent (`/readyz` answers 503),
 * never a run that fails later.
 */
import { GUARDRAIL_POINTS } from '../kernel/guardrails/guardrail'
import { SHIPPED_GUARDRAILS, type GuardrailSpec } from '../kernel/guardrails/spec'

/** What the check needs of the deployment. */
export interface GuardrailLimits {
  allowlist: readonly string[]
  /** The agents of the deployment (a judge may name one). */
  agents: readonly string[]
}

type Problem = { agent: string; field: string; message: string }

/** The problems of `agent`'s guardrails (none when it has none). */
export function guardrailProblems(
  agent: string,
  guardrails: unknown,
  limits: GuardrailLimits,
): Problem[] {
  if (guardrails === undefined) return []
  const problems: Problem[] = []
  const problem = (field: string, message: string) => problems.push({ agent, field, message })
  if (!guardrails || typeof guardrails !== 'object' || Array.isArray(guardrails)) {
    problem('guardrails', `must be an object with lists under ${GUARDRAIL_POINTS.join(', ')}`)
    return problems
  }
  for (const [point, list] of Object.entries(guardrails)) {
    const field = `guardrails.${point}`
    if (!(GUARDRAIL_POINTS as readonly string[]).includes(point)) {
      problem(field, `unknown point; the points are ${GUARDRAIL_POINTS.join(', ')}`)
      continue
    }
    if (!Array.isArray(list)) {
      problem(field, 'must be a list of guardrails')
      continue
    }
    const names = new Set<string>()
    list.forEach((spec: unknown, k) => {
      const at = `${field}[${k}]`
      const message = specProblem(spec as GuardrailSpec, point, limits)
      if (message) problem(at, message)
      const name = guardrailName(spec as GuardrailSpec)
      if (names.has(name))
        problem(at, `"${name}" is already a guardrail of this point; name it apart`)
      names.add(name)
    })
  }
  return problems
}

/** The name a spec's guardrail has in the trace. */
export function guardrailName(spec: GuardrailSpec): string {
  if (typeof spec === 'string') return spec
  if ('use' in spec) return spec.name ?? spec.use
  return String(spec.name)
}

function specProblem(spec: GuardrailSpec, point: string, limits: GuardrailLimits): string | null {
  if (typeof spec === 'string') {
    if ((spec as string) === 'topics')
      return '"topics" needs its list: { use: "topics", topics: [...] }'
    if (!(SHIPPED_GUARDRAILS as readonly string[]).includes(spec)) {
      return `"${spec}" is not a shipped guardrail (${SHIPPED_GUARDRAILS.join(', ')})`
    }
    return shippedPointProblem(spec, point)
  }
  if (!spec || typeof spec !== 'object') {
    return "must be a shipped guardrail's name, { use, … }, { name, check } or { name, judge }"
  }
  const named = 'name' in spec ? spec.name : undefined
  if (
    named !== undefined &&
    (typeof named !== 'string' || !/^[a-z][a-z0-9_-]{0,39}$/.test(named))
  ) {
    return 'name must be lowercase letters, digits, - and _, from a letter (at most 40)'
  }
  const common = commonProblem(spec)
  if (common) return common
  if ('use' in spec) return shippedProblem(spec, point, limits)
  if ('judge' in spec) {
    if (typeof named !== 'string') return 'a model-judged guardrail needs a "name"'
    const judge = spec.judge as Partial<JudgedSpecShape> | null
    if (!judge || typeof judge.instructions !== 'string' || !judge.instructions.trim()) {
      return 'judge.instructions must be a non-empty string'
    }
    return judgeProblem(judge, limits)
  }
  if ('check' in spec) {
    if (typeof named !== 'string') return 'a guardrail function needs a "name"'
    return typeof spec.check === 'function' ? null : 'check must be a function'
  }
  return "must be a shipped guardrail's name, { use, … }, { name, check } or { name, judge }"
}

interface JudgedSpecShape {
  agent: unknown
  model: unknown
  instructions: unknown
}

function commonProblem(spec: object): string | null {
  const { onError, timeoutMs } = spec as { onError?: unknown; timeoutMs?: unknown }
  if (onError !== undefined && onError !== 'trip' && onError !== 'pass') {
    return 'onError must be "trip" or "pass"'
  }
  if (
    timeoutMs !== undefined &&
    !(
      typeof timeoutMs === 'number' &&
      Number.isInteger(timeoutMs) &&
      timeoutMs > 0 &&
      timeoutMs <= 120_000
    )
  ) {
    return 'timeoutMs must be a whole number of milliseconds from 1 to 120000'
  }
  return null
}

function judgeProblem(judge: Partial<JudgedSpecShape>, limits: GuardrailLimits): string | null {
  if (judge.agent !== undefined && !limits.agents.includes(String(judge.agent))) {
    return `judge agent "${String(judge.agent)}" is not an agent of this deployment (${limits.agents.join(', ')})`
  }
  if (judge.model !== undefined && !limits.allowlist.includes(String(judge.model))) {
    return `judge model "${String(judge.model)}" is not in MODEL_ALLOWLIST (${limits.allowlist.join(', ')})`
  }
  return null
}

function shippedProblem(
  spec: { use: unknown },
  point: string,
  limits: GuardrailLimits,
): string | null {
  const use = spec.use
  if (!(SHIPPED_GUARDRAILS as readonly string[]).includes(String(use))) {
    return `"${String(use)}" is not a shipped guardrail (${SHIPPED_GUARDRAILS.join(', ')})`
  }
  const o = spec as Record<string, unknown>
  if (
    use === 'prompt_injection' &&
    o.action !== undefined &&
    o.action !== 'frame' &&
    o.action !== 'trip'
  ) {
    return 'action must be "frame" or "trip"'
  }
  if (use === 'answer_length') {
    if (o.maxChars !== undefined && !(Number.isInteger(o.maxChars) && (o.maxChars as number) > 0)) {
      return 'maxChars must be a whole number above 0'
    }
    if (o.action !== undefined && o.action !== 'trip' && o.action !== 'truncate') {
      return 'action must be "trip" or "truncate"'
    }
  }
  if (use === 'topics') {
    const topics = o.topics
    if (
      !Array.isArray(topics) ||
      !topics.length ||
      topics.some((t) => typeof t !== 'string' || !t.trim())
    ) {
      return 'topics must be a non-empty list of topics'
    }
    const judged = judgeProblem(o as Partial<JudgedSpecShape>, limits)
    if (judged) return judged
  }
  return shippedPointProblem(String(use), point)
}

/** The answer-length bound is for answers only. */
function shippedPointProblem(use: string, point: string): string | null {
  if (use === 'answer_length' && point !== 'output')
    return 'answer_length bounds the answer: put it under output'
  return null
}
