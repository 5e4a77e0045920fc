/**
 * Every configuration problem at once, for `GET /healthz?deep=1` and `/readyz`.
 * The loader stops at the first bad setting; this looks past each one by reading on as if that
 * variable were unset, so one answer lists all of them, and adds warnings for settings that are
 * allowed but probably not meant (the demo's pretend tools beside a real model).
 */
import { DEMO_MODEL, NO_KEY, SCRIPT_MODEL } from '../llm/create-model'
import { ConfigError } from '../errors/config-error'
import type { EnvRecord } from '../settings/setting'
import { DEMO_TOOLS, parseConfig, type ServiceConfig } from './load-config'
import { AgentConfigError, agentVariable } from './agents'

export interface ConfigProblem {
  variable: string
  message: string
  /** For an agent's problem: the agent and its field. */
  agent?: string
  field?: string
}

export interface ConfigReport {
  problems: ConfigProblem[]
  warnings: string[]
}

const MAX_PROBLEMS = 40

/** All problems and warnings of `env`; no problems means the service is ready. */
export function configReport(env: EnvRecord): ConfigReport {
  const problems: ConfigProblem[] = []
  const looked = new Set<string>()
  let current: Record<string, unknown> = { ...env }
  let config: ServiceConfig | undefined
  while (problems.length < MAX_PROBLEMS) {
    try {
      config = parseConfig(current)
      break
    } catch (err) {
      if (err instanceof AgentConfigError) {
        // Agents are checked last, all at once: nothing further to find.
        for (const p of err.problems) {
          problems.push({
            variable: agentVariable(p.agent),
            message: `agent "${p.agent}" ${p.field}: ${p.message}`,
            agent: p.agent,
            field: p.field,
          })
        }
        break
      }
      if (!(err instanceof ConfigError)) {
        problems.push({ variable: 'unknown', message: (err as Error).message })
        break
      }
      const names = err.variable.split(',').map((n) => n.trim())
      // A problem that reading on without the variable does not clear (a required setting
      // that is missing, a secret an MCP server names) is listed once and leaves nothing
      // further to find.
      if (names.every((n) => looked.has(n))) break
      problems.push({ variable: err.variable, message: err.message })
      names.forEach((n) => looked.add(n))
      current = { ...current }
      for (const n of names) current[n] = n === 'OPENAI_API_KEY' ? NO_KEY : undefined
    }
  }
  return { problems, warnings: config && !problems.length ? warningsFor(config, env) : [] }
}

function warningsFor(config: ServiceConfig, env: EnvRecord): string[] {
  const warnings: string[] = []
  const demoTools = config.enabledTools.filter((t) => DEMO_TOOLS.includes(t))
  const local = config.model.model === DEMO_MODEL || config.model.model === SCRIPT_MODEL
  if (demoTools.length && !local) {
    warnings.push(
      `ENABLED_TOOLS offers the demo's pretend tools (${demoTools.join(', ')}) with the real ` +
        `model ${config.model.model}: their data is made up and rollback_deploy changes nothing`,
    )
  }
  if (config.model.model === DEMO_MODEL) {
    warnings.push('MODEL=demo: runs replay the recorded demo investigation, not a real model')
  }
  if (config.model.model === SCRIPT_MODEL) {
    warnings.push('MODEL=script: runs follow the script written in their task, not a real model')
  }
  if (config.policy.mode !== 'allowlist' && typeof env.CONFIRM_ALLOWLIST === 'string') {
    if (env.CONFIRM_ALLOWLIST.trim()) {
      warnings.push(`CONFIRM_ALLOWLIST is ignored under CONFIRM_POLICY=${config.policy.mode}`)
    }
  }
  for (const { agent, reason } of config.agentsLeftOut) {
    warnings.push(`agent "${agent}" is not offered (GET /v1/agents leaves it out): ${reason}`)
  }
  if (!config.security.apiTokens.length && !env.WEBHOOK_SECRET) {
    warnings.push('no API_TOKENS, API_TOKEN or WEBHOOK_SECRET: nobody can use /v1')
  }
  return warnings
}
