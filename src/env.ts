import type { EnvVars } from './env-vars'

/**
 * Bindings, vars and secrets of the Worker: the bindings as `npm run cf-typegen` generates them
 * from wrangler.toml (`WranglerEnv`, worker-configuration.d.ts: the run Durable Objects, the run
 * index), and every setting as src/env-vars.ts documents it, [vars] of wrangler.toml included.
 */
export interface Env extends Omit<WranglerEnv, keyof EnvVars>, EnvVars {}
