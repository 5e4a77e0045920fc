import { defineAgent } from './define-agent'

/**
 * The offline demo's log reader: the `oncall` agent delegates the log reading to it, so each
 * demo run shows a parent and a child run with its own trace (docs/agents.md#delegation). It
 * only reads (`search_logs`), so its calls may run beside other read-only calls. Offered without
 * ENABLED_AGENTS only when MODEL=demo.
 */
export const logAnalyst = defineAgent({
  name: 'log_analyst',
  description: 'Reads a service’s logs and reports its errors, when they began and their cause.',
  instructions: `You read application logs for the on-call engineer.
- Search the service's logs for errors in the window you are given.
- Report the dominant error message verbatim, when it started and how often it occurs.
- Say what the errors point at (a resource, a dependency, a configuration); do not guess fixes.`,
  tools: ['search_logs'],
  model: 'demo',
  protocol: 'native',
  // The recorded reading takes two steps.
  budget: { maxSteps: 4 },
})
