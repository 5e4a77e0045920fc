import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi'
import type { DeclaredRoutes } from './serve-route'
import { servicePaths } from './openapi-service'
import { connectionPaths } from './openapi-connections'
import { a2aPaths } from './openapi-a2a'
import { openApiComponents } from './openapi-components'
import { errorResponses, ROUTE_ERRORS } from './openapi-errors'
import { bearer, consoleFile, cursor, limit, ok, slackOperation } from './openapi-parts'

let cached: Record<string, unknown> | undefined

/**
 * The OpenAPI 3.1 document: request schemas are the zod schemas that validate requests, response
 * schemas those the tests parse real responses with; the paths of `declared` routes are generated
 * from their declarations. `origin` becomes the one server.
 */
export function openApiDocument(origin: string, declared: readonly DeclaredRoutes[]): unknown {
  cached ??= buildDocument(declared)
  return { ...cached, servers: [{ url: origin, description: 'This deployment' }] }
}

/** The paths of the routes declared under `base` (docs/decisions.md#the-openapi-document). */
function pathsOf(declared: readonly DeclaredRoutes[], base: string): Record<string, unknown> {
  const definitions = declared.filter((routes) => routes.base === base)
  const registry = definitions.flatMap((routes) => routes.registry.definitions)
  const info = { title: 'edgeloop', version: '0.1.0' }
  return new OpenApiGeneratorV31(registry).generateDocument({ openapi: '3.1.0', info }).paths ?? {}
}

/**
 * The inbox: `/v1/approvals` and `/v1/inbox` are the same list of every kind of pending item
 * (docs/human-in-the-loop.md#the-inbox).
 */
function inboxOperation(operationId: 'listApprovals' | 'listInbox') {
  return {
    operationId,
    summary:
      operationId === 'listInbox'
        ? 'Every pending item (approvals, questions, connections) across runs, newest first'
        : 'Pending items across runs, newest first (the inbox under its first name)',
    description:
      'Each item names its `kind`, what it asks (`ask`), its `actions` and the `href` they are posted to; approvals that may be edited carry their `editSchema`. Expired items are left out.',
    tags: ['approvals'],
    security: bearer,
    parameters: [
      {
        name: 'status',
        in: 'query',
        required: false,
        schema: { type: 'string', enum: ['pending'], default: 'pending' },
      },
      limit,
      cursor,
    ],
    responses: {
      '200': ok('A page of pending items', 'ApprovalPage'),
      ...errorResponses(ROUTE_ERRORS.listApprovals),
    },
  }
}

function buildDocument(declared: readonly DeclaredRoutes[]): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'edgeloop',
      version: '0.1.0',
      description: 'A ReAct agent kernel on Cloudflare Workers.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    tags: [
      { name: 'runs', description: 'Start, follow and steer runs' },
      { name: 'agents', description: 'The agents runs may name' },
      {
        name: 'approvals',
        description: 'A person in the loop: approvals (edited or not), questions, the inbox',
      },
      { name: 'service', description: 'Health, readiness and this description' },
      { name: 'slack', description: 'Slack app endpoints' },
      { name: 'connections', description: "MCP servers' OAuth connections, granted by a person" },
      { name: 'a2a', description: 'Our agents served to other agents over A2A' },
    ],
    components: openApiComponents(),
    security: bearer,
    paths: {
      ...servicePaths,
      '/console': consoleFile(
        'consolePage',
        'The web console (asks for an API token)',
        'text/html',
      ),
      '/console/console.js': consoleFile(
        'consoleScript',
        "The console's script",
        'text/javascript',
      ),
      '/console/console.css': consoleFile('consoleStyle', "The console's style sheet", 'text/css'),
      '/console/favicon.svg': consoleFile('consoleIcon', "The console's icon", 'image/svg+xml'),
      // Declared with their handlers (routes/api/), in the order the document always had.
      ...pathsOf(declared, '/v1/runs'),
      '/v1/approvals': { get: inboxOperation('listApprovals') },
      '/v1/inbox': { get: inboxOperation('listInbox') },
      ...pathsOf(declared, '/v1/me'),
      ...connectionPaths,
      ...pathsOf(declared, '/v1/agents'),
      '/slack/commands': slackOperation('slackCommand', 'Slack slash command'),
      '/slack/events': slackOperation('slackEvent', 'Slack Events API'),
      '/slack/interactions': slackOperation('slackInteraction', 'Slack interactivity'),
      ...a2aPaths,
    },
  }
}
