import type { Agent } from '../config/agents'
import type { ServiceConfig } from '../config/index'
import type { Guardrail, GuardrailPoint, RunGuardrails } from '../kernel/guardrails/guardrail'
import { answerLength, DEFAULT_MAX_ANSWER_CHARS } from '../kernel/guardrails/answer-length'
import { judgedGuardrail } from '../kernel/guardrails/judge'
import { piiRedaction } from '../kernel/guardrails/pii'
import { promptInjection } from '../kernel/guardrails/prompt-injection'
import { secretsGuardrail } from '../kernel/guardrails/secrets'
import type { GuardrailSpec, JudgeSpec } from '../kernel/guardrails/spec'
import { topicAllowList } from '../kernel/guardrails/topics'
import type { Model } from '../kernel/model'
import { createModel } from '../llm/create-model'
import { redactAcrossLines } from '../security/redact'

/**
 * A run's guardrails (docs/guardrails.md), made from its agent's definition as deployed: shipped
 * ones by name, functions as they are, model-judged checks with their judge's model. Guardrails
 * are code, not data, so a run reads them from the deployed agent at every slice (a deploy that
 * changes them applies to running runs, as a stricter policy does); what they decided is in the
 * run's state.
 */
export function guardrailsOfRun(
  agentName: string,
  config: ServiceConfig,
): RunGuardrails | undefined {
  const agent = config.agents.find((a) => a.name === agentName)
  if (!agent || !Object.keys(agent.guardrails).length) return undefined
  const made = {} as Record<GuardrailPoint, Guardrail[]>
  for (const point of ['input', 'toolInput', 'toolOutput', 'output'] as const) {
    made[point] = (agent.guardrails[point] ?? []).map((spec) => guardrailOf(spec, config))
  }
  return made
}

function guardrailOf(spec: GuardrailSpec, config: ServiceConfig): Guardrail {
  if (typeof spec === 'string') return guardrailOf({ use: spec }, config)
  if ('check' in spec) return spec
  if ('judge' in spec) {
    const { model, instructions } = judgeOf(spec.judge, config)
    return judgedGuardrail({
      name: spec.name,
      model,
      instructions,
      ...(spec.onError ? { onError: spec.onError } : {}),
      ...(spec.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}),
    })
  }
  switch (spec.use) {
    case 'pii':
      return piiRedaction(spec.name)
    case 'secrets':
      return secretsGuardrail(redactAcrossLines, spec.name)
    case 'prompt_injection':
      return promptInjection({ ...spec })
    case 'answer_length':
      return answerLength({ ...spec, maxChars: spec.maxChars ?? DEFAULT_MAX_ANSWER_CHARS })
    case 'topics': {
      const judge: JudgeSpec = { instructions: '' }
      if (spec.agent !== undefined) judge.agent = spec.agent
      if (spec.model !== undefined) judge.model = spec.model
      return topicAllowList({
        topics: spec.topics,
        model: judgeOf(judge, config).model,
        ...(spec.name ? { name: spec.name } : {}),
        ...(spec.onError ? { onError: spec.onError } : {}),
        ...(spec.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}),
      })
    }
  }
}

/** The judge's model and instructions: a named agent's (its model, its instructions first). */
function judgeOf(judge: JudgeSpec, config: ServiceConfig): { model: Model; instructions: string } {
  const agent: Agent | undefined = judge.agent
    ? config.agents.find((a) => a.name === judge.agent)
    : undefined
  const modelName = judge.model ?? agent?.model ?? undefined
  const model = createModel(config.model, modelName ? { model: modelName } : {})
  const instructions = [agent?.instructions, judge.instructions]
    .filter((t) => t?.trim())
    .join('\n\n')
  return { model, instructions }
}
