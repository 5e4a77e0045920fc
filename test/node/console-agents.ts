/**
 * The agent catalog of the console's Miniflare Worker (console-worker.ts bundles it in place of
 * agents/index.ts with wrangler's `--alias`): the shipped agents and two more made with the real
 * `defineAgent`, one whose name is as long as a name may be (40 characters), to lay out the picker with.
 */
import { AGENT_CATALOG as SHIPPED } from '../../agents/catalog'
import { defineAgent, type AgentDefinition } from '../../agents/define-agent'

export type { AgentDefinition }

/** The longest name an agent may have, and a description as long as people write them. */
const longNamed = defineAgent({
  name: 'payments_reconciliation_incident_analyst',
  description:
    'Reviews a payments reconciliation incident end to end: ledgers, settlement files and the provider’s reports.',
  instructions: 'You review payments reconciliation incidents.',
  tools: [],
})

const notes = defineAgent({
  name: 'notes',
  description: 'Writes release notes.',
  instructions: 'You write release notes.',
  tools: [],
})

export const AGENT_CATALOG: readonly Readonly<AgentDefinition>[] = [...SHIPPED, longNamed, notes]
