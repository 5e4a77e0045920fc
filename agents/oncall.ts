import { defineAgent } from './define-agent'
import instructions from './oncall.md'

/**
 * The offline demo as an agent: the recorded on-call investigation (MODEL=demo replays it) with
 * its pretend incident tools; it hands the log reading to the log_analyst agent, a child run. Offered without ENABLED_AGENTS only when MODEL=demo.
 */
export const oncall = defineAgent({
  name: 'oncall',
  description: 'On-call incident responder (offline demo): metrics, logs, repo, rollback.',
  // Long instructions read better as Markdown: a bundled text module (docs/agents.md).
  instructions,
  tools: ['query_metrics', 'read_repo_file', 'rollback_deploy'],
  // The log reading is a child run of its own (agents/log-analyst.ts).
  delegates: ['log_analyst'],
  model: 'demo',
  protocol: 'native',
  // The recorded investigation takes five steps.
  budget: { maxSteps: 8 },
})
