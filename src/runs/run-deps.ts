import { loadConfig } from '../config'
import type { EnvVars } from '../env-vars'
import { ToolRegistry } from '../kernel/registry'
import type { RunState } from '../kernel/state'
import type { Deps, Pricing } from '../kernel/transition'
import { createModel } from '../llm/create-model'
import { conversationObservations } from './conversation-observations'
import { childRuns } from './child-runs'
import type { McpSessions } from '../mcp/index'
import { reservedToolNames, runMcpTools } from './mcp-tools'
import { redactorFor } from '../security/redact'
import { guardrailsOfRun } from './run-guardrails'
import type { RunStorage } from './storage'
import type { RunInfo } from './types'
import type { ServiceConfig } from '../config/index'
import type { AgentPolicy } from '../kernel/tool'

/**
 * What the kernel needs to advance one run (docs/architecture.md#layers): its tools (built-in
 * and MCP, as the run named them, the MCP ones calling in `mcpSessions`), its model, its
 * observation store (the conversation's earlier runs behind it) and the configured prices. Built
 * once per object and kept.
 */
export function runDependencies(
  env: EnvVars & { RUNS?: DurableObjectNamespace },
  storage: RunStorage,
  state: RunState,
  info: RunInfo | undefined,
  current: () => RunState,
  mcpSessions: McpSessions,
  slackThread?: () => string | undefined,
): Deps {
  const config = loadConfig(env)
  const reserved = reservedToolNames(config)
  const mcp = runMcpTools(env, storage, state.id, config.mcpServers, mcpSessions, reserved)
  const all = new ToolRegistry(config.tools)
  const builtIn = all.subset(state.tools.filter((t) => all.get(t))).list()
  const asks = config.delegateTools.filter((t) => state.tools.includes(t.name))
  const registry = new ToolRegistry([...builtIn, ...asks, ...mcp]).forRun()
  const { pricePromptPer1kUsd: p, priceCompletionPer1kUsd: c } = config.model
  return {
    model: createModel(config.model, info?.model ? { model: info.model } : {}),
    registry,
    observations: conversationObservations(
      { put: (h, t) => storage.putObservation(h, t), get: (h) => storage.getObservation(h) },
      current,
      env.RUNS,
    ),
    redact: redactorFor(env),
    children: childRuns(env, storage, info, slackThread),
    guardrails: guardrailsOfRun(state.agent.name, config),
    ...agentPolicyOfRun(state.agent.name, config),
    ...(p !== undefined || c !== undefined
      ? { pricing: pricing(p ?? 0, c ?? 0, config.model.priceCachedPromptPer1kUsd) }
      : {}),
  }
}

/** The run's prices; the cached-prompt price only when one is configured. */
function pricing(
  promptPer1K: number,
  completionPer1K: number,
  cachedPromptPer1K?: number,
): Pricing {
  return cachedPromptPer1K === undefined
    ? { promptPer1K, completionPer1K }
    : { promptPer1K, completionPer1K, cachedPromptPer1K }
}

/**
 * The run's agent's policy as code, read from the deployed agent at every slice as its guardrails
 * are (a deploy that changes it applies to runs in flight); none when it has none.
 */
function agentPolicyOfRun(agentName: string, config: ServiceConfig): { policy?: AgentPolicy } {
  const policy = config.agents.find((a) => a.name === agentName)?.callPolicy
  return policy ? { policy } : {}
}
