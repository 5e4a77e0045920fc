import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi'
import type { DeclaredRoutes } from './serve-route'
import { servicePaths } from './openapi-service'
import { openApiComponents } from './openapi-components'
import { bearer, consoleFile, slackOperation } from './openapi-parts'

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

/** The paths of the declared routes (docs/decisions.md#the-openapi-document). */
function generatedPaths(declared: readonly DeclaredRoutes[]): Record<string, unknown> {
  const definitions = declared.flatMap((routes) => routes.registry.definitions)
  const info = { title: 'edgeloop', version: '0.1.0' }
  return (
    new OpenApiGeneratorV31(definitions).generateDocument({ openapi: '3.1.0', info }).paths ?? {}
  )
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
      { name: 'approvals', description: 'Human approval of side effects' },
      { name: 'service', description: 'Health, readiness and this description' },
      { name: 'slack', description: 'Slack app endpoints' },
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
      // Declared with their handlers (routes/api/).
      ...generatedPaths(declared),
      '/slack/commands': slackOperation('slackCommand', 'Slack slash command'),
      '/slack/events': slackOperation('slackEvent', 'Slack Events API'),
      '/slack/interactions': slackOperation('slackInteraction', 'Slack interactivity'),
    },
  }
}
