import { OpenAPIRegistry, type RouteConfig } from '@asteasolutions/zod-to-openapi'
import type { Handler, Hono, MiddlewareHandler } from 'hono'
import { mergePath } from 'hono/utils/url'
import type { AppEnv } from '../app-env'

/** `/{id}/trace` (OpenAPI's form of a path) → `/:id/trace` (Hono's). */
type RoutingPath<P extends string> = P extends `${infer Head}{${infer Name}}${infer Tail}`
  ? `${Head}:${Name}${RoutingPath<Tail>}`
  : P

/** A route's method, path and what the document says of it, typed as written. */
export function declareRoute<P extends string>(route: RouteConfig & { path: P }) {
  return route
}

/**
 * The routes of one group mounted at `base` (`/v1/runs`), each declared once with what
 * /openapi.json says of it (a route of @asteasolutions/zod-to-openapi, the generator behind
 * @hono/zod-openapi: docs/decisions.md#the-openapi-document).
 */
export class DeclaredRoutes {
  /** The declarations, with their whole paths, for the document's generator. */
  readonly registry = new OpenAPIRegistry()

  constructor(readonly base: string) {}

  /** Serves `route` on `app` (mounted at `base`) with its middleware and handler; declares it. */
  serve<P extends string>(
    app: Hono<AppEnv>,
    route: RouteConfig & { path: P },
    ...handlers: [...MiddlewareHandler<AppEnv, RoutingPath<P>>[], Handler<AppEnv, RoutingPath<P>>]
  ): void {
    this.registry.registerPath({ ...route, path: mergePath(this.base, route.path) })
    const path = route.path.replaceAll(/\{([^}]+)\}/g, ':$1') as RoutingPath<P>
    app.on(route.method.toUpperCase(), path, ...(handlers as [Handler<AppEnv, RoutingPath<P>>]))
  }
}
