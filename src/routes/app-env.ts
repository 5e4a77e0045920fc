import type { Env } from '../env'
import type { RunVisibility, Scope } from '../security/api-tokens'
import type { ServedAuth } from '../serve/oauth'

/** Who sent an API request: a named token with its scopes, or a signed webhook. */
export type Principal =
  | { kind: 'token'; name: string; scopes: readonly Scope[]; runs: RunVisibility }
  | { kind: 'webhook'; name: 'webhook'; scopes: readonly Scope[]; signature: string }

/** The Hono environment of every route: bindings plus what middleware leaves for handlers. */
export type AppEnv = {
  Bindings: Env
  Variables: {
    /** The request body as received (set by requireAuth / Slack verification). */
    rawBody: string
    /** A token's name, `webhook` or `slack:<user>`: what runs record as who asked or decided. */
    principal: string
    /** The authenticated API caller (set by requireAuth). */
    caller: Principal
    /** A served path's caller and, through OAuth, its verified token (set by requireServedCaller). */
    served: Exclude<ServedAuth, { refusal: Response }>
  }
}
