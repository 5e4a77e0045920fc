import type { EnvVars } from './env-vars'
import type { RunStore } from './runs/run-store'

/** Bindings, vars and secrets of the Worker: the run Durable Objects plus every setting. */
export interface Env extends EnvVars {
  RUNS: DurableObjectNamespace<RunStore>
  /** The run index (D1): the run list and the approval inbox (docs/architecture.md#events). */
  RUN_INDEX: D1Database
}
