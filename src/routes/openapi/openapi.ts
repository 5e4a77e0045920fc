import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi'
import type { DeclaredRoutes } from './serve-route'
import { openApiComponents } from './openapi-components'
import { bearer } from './openapi-parts'

let cached: Record<string, unknown> | undefined

/**
 * The OpenAPI 3.1 document: its paths generated from the routes `declared` (every group the app
 * mounts, each route declared once with its handler); its components the request schemas that
 * validate requests and the response schemas the tests parse real responses with. `origin`
 * becomes the one server.
 */
export function openApiDocument(
  origin: string,
  declared: readonly DeclaredRoutes[],
  maxima?: Readonly<Record<string, number | undefined>>,
): unknown {
  cached ??= buildDocument(declared)
  const document = { ...cached, servers: [{ url: origin, description: 'This deployment' }] }
  return maxima ? withBudgetMaxima(document, maxima) : document
}

/**
 * The document with this deployment's budget maxima (MAX_STEPS and the rest) as the `maximum` of
 * each budget field a request may set, wherever a schema has a `budget` object: a request above
 * one is refused (`budget_over_maximum`), so the document says so.
 */
export function withBudgetMaxima<T extends object>(
  document: T,
  maxima: Readonly<Record<string, number | undefined>>,
): T {
  const copy = structuredClone(document)
  const pending: unknown[] = [copy]
  while (pending.length) {
    const node = pending.pop()
    if (!node || typeof node !== 'object') continue
    const budget = (node as { properties?: { budget?: { properties?: unknown } } }).properties
      ?.budget?.properties
    if (budget && typeof budget === 'object') {
      for (const [key, field] of Object.entries(
        budget as Record<string, Record<string, unknown>>,
      )) {
        const max = maxima[key]
        if (typeof max === 'number' && Number.isFinite(max) && field && typeof field === 'object') {
          field.maximum = max
        }
      }
    }
    pending.push(...Object.values(node))
  }
  return copy
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
      { name: 'a2a', description: 'Our agents served to other agents over A2A' },
    ],
    components: openApiComponents(),
    security: bearer,
    paths: pathsOf(declared),
  }
}
