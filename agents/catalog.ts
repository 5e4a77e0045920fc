import type { AgentDefinition } from './define-agent'
import { defaultAgent } from './default'
import { lead } from './lead'
import { logAnalyst } from './log-analyst'
import { oncall } from './oncall'
import { triage } from './triage'

/** Every agent a deployment can offer. Adding an agent: its file in agents/, and one line here. */
export const AGENT_CATALOG: readonly Readonly<AgentDefinition>[] = [
  defaultAgent,
  oncall,
  logAnalyst,
  triage,
  lead,
]
