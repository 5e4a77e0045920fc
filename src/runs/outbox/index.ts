// What the RunStore uses of the outbox; the files here import each other directly.
export { deliverEntry } from './deliver-entry'
export type { LiveAnswer } from './delivery-context'
export { Outbox, type OutboxEntry } from './outbox'
