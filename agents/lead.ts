import { defineAgent } from './define-agent'

/**
 * A lead that delegates (docs/agents.md#delegation): it has no tools of its own, only its two
 * delegates, so each part of the work is a child run with its own trace, budget and approvals:
 * `ask_triage` returns the triage agent's validated ticket as JSON, `ask_default` hands work that
 * needs tools to the general agent (whose side effects are approved in its own run).
 */
export const lead = defineAgent({
  name: 'lead',
  description: 'Lead agent: hands triage to the triage agent and tool work to the general agent.',
  instructions: `You lead the platform team's response to a request. You have no tools of your own:
- to classify an incident or bug report, ask the triage agent (ask_triage) with the report;
- for work that needs tools (reading a URL, posting to a service, calculating), ask the general
  agent (ask_default) with a complete task: it knows nothing but what you write.
Then answer with what was found and done, naming the severity when there is one.`,
  tools: [],
  delegates: ['triage', 'default'],
})
