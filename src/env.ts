import type { EnvVars } from './env-vars'
import type { RunStore } from './runs/run-store'
import type { SlackThread } from './runs/slack-thread'

/** Bindings, vars and secrets of the Worker: the run Durable Objects plus every setting. */
export interface Env extends EnvVars {
  RUNS: DurableObjectNamespace<RunStore>
  /** One object per Slack thread or DM: the runs of a conversation there. */
  SLACK_THREADS: DurableObjectNamespace<SlackThread>
  /** The run index (D1): the run list and the approval inbox (docs/architecture.md#events). */
  RUN_INDEX: D1Database
}
