/**
 * What the simulator bundles in place of `cloudflare:workers` (scripts/sim.mjs aliases it): the
 * Durable Object base class, which only keeps the object's `ctx` and `env`. The simulator passes a
 * simulated `ctx` (sim-storage.ts) and `env` (world.ts); the object's own code is the real one.
 */
export class DurableObject<Env = unknown> {
  protected readonly ctx: DurableObjectState
  protected readonly env: Env
  constructor(ctx: DurableObjectState, env: Env) {
    this.ctx = ctx
    this.env = env
  }
}

/**
 * @cloudflare/workers-oauth-provider imports it at load only to tell an entrypoint class from a
 * handler object (`prototype instanceof`); the simulation runs no entrypoint.
 */
export class WorkerEntrypoint {}
