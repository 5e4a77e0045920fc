/**
 * How many event streams may be open, and how far a reader may fall behind (docs/limits.md).
 * Read by the events route on every stream request, apart from the rest of the configuration:
 * watching a run must keep working while an unrelated setting is broken.
 */
import * as setting from '../settings/setting'
import { readSettings, type EnvRecord } from '../settings/setting'

export interface EventStreamLimits {
  /** Streams open at once on one run, all tokens together. */
  perRun: number
  /** Streams one token (or other principal) may hold open at once. */
  perToken: number
  /** Bytes written to one stream and not yet read by its client; beyond, the stream is closed. */
  queueBytes: number
  /** Run-list streams (`GET /v1/runs/stream`) open at once on the deployment, all tokens together. */
  listStreams: number
  /** Served calls (MCP, A2A) one token may have waiting at once across the deployment. */
  servedPerToken: number
}

export const EVENT_STREAM_SETTINGS = {
  EVENT_STREAMS_PER_RUN: setting.number({ min: 1, max: 1_000, integer: true, fallback: 32 }),
  EVENT_STREAMS_PER_TOKEN: setting.number({ min: 1, max: 1_000, integer: true, fallback: 8 }),
  EVENT_STREAM_QUEUE_KB: setting.number({ min: 16, max: 16_384, integer: true, fallback: 512 }),
  RUN_LIST_STREAMS: setting.number({ min: 1, max: 10_000, integer: true, fallback: 100 }),
  SERVED_CALLS_PER_TOKEN: setting.number({ min: 1, max: 1_000, integer: true, fallback: 32 }),
}

const cache = new WeakMap<object, EventStreamLimits>()

/** The limits of `env`; throws a ConfigError naming a bad setting. */
export function eventStreamLimits(env: EnvRecord): EventStreamLimits {
  let limits = cache.get(env)
  if (!limits) {
    const s = readSettings(env, EVENT_STREAM_SETTINGS)
    limits = {
      perRun: s.EVENT_STREAMS_PER_RUN,
      perToken: s.EVENT_STREAMS_PER_TOKEN,
      queueBytes: s.EVENT_STREAM_QUEUE_KB * 1024,
      listStreams: s.RUN_LIST_STREAMS,
      servedPerToken: s.SERVED_CALLS_PER_TOKEN,
    }
    cache.set(env, limits)
  }
  return limits
}
