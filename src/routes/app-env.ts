import type { Env } from '../env'

/** The Hono environment of every route: bindings plus what middleware leaves for handlers. */
export type AppEnv = {
  Bindings: Env
  Variables: {
    /** The request body as received (set by requireAuth / Slack verification). */
    rawBody: string
    /** `api`, `webhook` or `slack:<user>`. */
    principal: string
  }
}
