import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi'
import type { DeclaredRoutes } from './serve-route'
import { servedOAuthPaths } from './openapi-served-oauth'
import { openApiComponents } from './openapi-components'
import { bearer } from './openapi-parts'

let cached: Record<string, unknown> | undefined

/**
 * The OpenAPI 3.1 document: its paths generated from the routes `declared` (every group the app
 * mounts, each route declared once with its handler); its components the request schemas that
 * validate requests and the response schemas the tests parse real responses with. `origin`
 * becomes the one server.
 */
export function openApiDocument(origin: string, declared: readonly DeclaredRoutes[]): unknown {
  cached ??= buildDocument(declared)
  return { ...cached, servers: [{ url: origin, description: 'This deployment' }] }
}

/**
 * Every route's path item, generated from its declaration, in the order of `declared`
 * (docs/decisions.md#the-openapi-document).
 */
function pathsOf(declared: readonly DeclaredRoutes[]): Record<string, unknown> {
  const registry = declared.flatMap((routes) => routes.registry.definitions)
  const info = { title: 'edgeloop', version: '0.1.0' }
  return new OpenApiGeneratorV31(registry).generateDocument({ openapi: '3.1.0', info }).paths ?? {}
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
      { name: 'mcp', description: 'The agents served as MCP tools (docs/serving.md)' },
      {
        name: 'oauth',
        description: 'The authorization server for served agents: clients act for an API token',
      },
    ],
    components: openApiComponents(),
    security: bearer,
    // The served agents' OAuth routes are still described beside their handlers' folder.
    paths: { ...pathsOf(declared), ...servedOAuthPaths },
  }
}
