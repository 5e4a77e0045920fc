import { app } from './routes/app'
import type { Env } from './env'

export { RunStore } from './runs/run-store'
export { SlackThread } from './runs/slack-thread'
export { RunListHub } from './runs/index/run-list-hub'
export type { Env } from './env'

export default {
  fetch: (request, env, ctx) => app.fetch(request, env, ctx),
} satisfies ExportedHandler<Env>
