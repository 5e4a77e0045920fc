import { defineAgent } from './define-agent'

/**
 * The offline demo as an agent: the recorded on-call investigation (MODEL=demo replays it) with
 * its pretend incident tools; it hands the log reading to the log_analyst agent, a child run. Offered without ENABLED_AGENTS only when MODEL=demo.
 */
export const oncall = defineAgent({
  name: 'oncall',
  description: 'On-call incident responder (offline demo): metrics, logs, repo, rollback.',
  instructions: `You are the on-call engineer for the order platform. When an incident is reported:
- Establish the impact first: compare the affected service's error rate with its neighbours.
- Find the cause from evidence (logs, recent deploys, configuration), never from guesses; ask
  the log analyst (ask_log_analyst) to read a service's logs.
- Prefer the smallest safe mitigation; a rollback is a side effect and needs a person's approval.
- End with the root cause, the evidence for it, and what was done or is recommended.`,
  tools: ['query_metrics', 'read_repo_file', 'rollback_deploy'],
  // The log reading is a child run of its own (agents/log-analyst.ts).
  delegates: ['log_analyst'],
  model: 'demo',
  protocol: 'native',
  // The recorded investigation takes five steps.
  budget: { maxSteps: 8 },
})
