import { Hono } from 'hono/tiny'
import { allToolsOf, loadConfig, type Agent, type ServiceConfig } from '../../config'
import type { AppEnv } from '../app-env'
import { findAgent } from '../../runs/start'
import { requireAuth } from './auth'
import type { AgentBody, AgentItemBody } from '../../api/response-schemas'
import { AGENT_NAME_PATTERN } from '../../config'
import { errorResponses, ROUTE_ERRORS } from '../openapi/openapi-errors'
import { bearer, ok } from '../openapi/openapi-parts'
import { declareRoute, DeclaredRoutes } from '../openapi/serve-route'

/** `GET /v1/agents` and `GET /v1/agents/:name`: the agents runs may name (scope runs:read). */
export const agentsRoutes = new Hono<AppEnv>()

/** What /openapi.json says of each route here. */
export const agentsDocs = new DeclaredRoutes('/v1/agents')

const listAgentsRoute = declareRoute({
  method: 'get',
  path: '/',
  operationId: 'listAgents',
  summary: 'The agents runs may name: tools, model, protocol, output schema',
  tags: ['agents'],
  security: bearer,
  responses: {
    '200': ok('The agents', 'AgentList'),
    ...errorResponses(ROUTE_ERRORS.listAgents),
  },
})

agentsDocs.serve(agentsRoutes, listAgentsRoute, requireAuth(), (c) => {
  const config = loadConfig(c.env)
  const agents = config.agents.map((a) => agentItem(a, config))
  return c.json({ agents })
})

const getAgentRoute = declareRoute({
  method: 'get',
  path: '/{name}',
  operationId: 'getAgent',
  summary: 'One agent, with its instructions',
  tags: ['agents'],
  security: bearer,
  parameters: [
    {
      name: 'name',
      in: 'path',
      required: true,
      description: "The agent's name.",
      schema: { type: 'string', pattern: AGENT_NAME_PATTERN.source },
    },
  ],
  responses: {
    '200': ok('The agent', 'Agent'),
    ...errorResponses(ROUTE_ERRORS.getAgent),
  },
})

agentsDocs.serve(agentsRoutes, getAgentRoute, requireAuth(), (c) => {
  const config = loadConfig(c.env)
  const agent = findAgent(config, c.req.param('name'))
  const body: AgentBody = { ...agentItem(agent, config), instructions: agent.instructions }
  return c.json(body)
})

/** An agent as the list shows it; an agent of every tool lists what the deployment offers. */
function agentItem(agent: Agent, config: ServiceConfig): AgentItemBody {
  const every = [...config.enabledTools, ...config.mcpServers.map((s) => allToolsOf(s.name))]
  return {
    name: agent.name,
    description: agent.description,
    tools: agent.tools ?? every,
    model: agent.model,
    protocol: agent.protocol,
    outputSchema: agent.outputSchema,
    delegates: agent.delegates,
  }
}
