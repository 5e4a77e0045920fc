// What the RunStore uses of a run's events; the files here import each other directly.
export { EventLog } from './event-log'
export { EventHub, type StreamRequest, type Subscription } from './event-stream'
export { LiveDeltas } from './live-deltas'
