import { AGENT_CARD_PATH, AgentCard, type AgentSkill } from '@a2a-js/sdk'
import type { Agent } from '../../config'

/** Where the JSON-RPC endpoint is, below the Worker's origin (docs/serving.md#a2a). */
export const A2A_PATH = '/a2a'
/** Where an A2A client looks for the card: `/.well-known/agent-card.json`. */
export { AGENT_CARD_PATH }
/** The protocol version the endpoint speaks natively; v0.3 method names are also accepted. */
export const A2A_VERSION = '1.0'

const TEXT = 'text/plain'
const JSON_TYPE = 'application/json'

/**
 * The deployment's agent card: one skill per agent it offers (the skill's id is the agent's
 * name), the JSON-RPC endpoint at `origin` + A2A_PATH, and the API bearer token as its
 * authentication. The card is public; what a token may do is checked per request.
 */
export function agentCard(agents: readonly Agent[], origin: string): unknown {
  const card: AgentCard = {
    name: 'edgeloop',
    description:
      "This deployment's agents, each a skill: send a message naming the skill (metadata.skill, or metadata.agent) to start a run of that agent.",
    supportedInterfaces: [
      {
        url: `${origin}${A2A_PATH}`,
        protocolBinding: 'JSONRPC',
        tenant: '',
        protocolVersion: A2A_VERSION,
      },
    ],
    provider: undefined,
    version: A2A_VERSION,
    documentationUrl: `${origin}/openapi.json`,
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extensions: [],
      extendedAgentCard: false,
    },
    securitySchemes: {
      bearer: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: {
            scheme: 'Bearer',
            bearerFormat: 'API token',
            description:
              'An API token of this deployment (API_TOKENS), as for the HTTP API, or an OAuth access token issued for /a2a (PUBLIC_URL/.well-known/oauth-protected-resource/a2a)',
          },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: [TEXT],
    defaultOutputModes: [TEXT],
    skills: agents.map(skillOf),
    signatures: [],
  }
  return AgentCard.toJSON(card)
}

/** An agent as a skill: a structured answer comes as JSON beside its text. */
function skillOf(agent: Agent): AgentSkill {
  return {
    id: agent.name,
    name: agent.name,
    description: agent.description || `The ${agent.name} agent`,
    tags: agent.outputSchema ? ['agent', 'structured-output'] : ['agent'],
    examples: [],
    inputModes: [TEXT],
    outputModes: agent.outputSchema ? [JSON_TYPE, TEXT] : [TEXT],
    securityRequirements: [],
  }
}
