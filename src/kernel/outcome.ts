/**
 * The one shape of a result that may fail, used across the kernel: `{ ok: true, …what it
 * gives }` or `{ ok: false, …why not }`. A failure is data the caller branches on, never a throw.
 */
export type Outcome<T extends object, F extends object = { error: string }> =
  ({ ok: true } & T) | ({ ok: false } & F)
