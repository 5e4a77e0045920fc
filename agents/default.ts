import { defineAgent } from './define-agent'

/**
 * The agent of a run that names none: no instructions of its own (the kernel's rules alone),
 * every enabled tool and every MCP server's, the deployment's model, protocol, policy and budget.
 * It is what edgeloop did before agents, so every request, webhook and Slack command that names
 * no agent works as it did.
 */
export const defaultAgent = defineAgent({
  name: 'default',
  description: 'General agent: every enabled tool, the deployment’s model and policy.',
  instructions: '',
})
