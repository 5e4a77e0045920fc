/**
 * A value now, or a promise of it later. The step machine's functions return this where the work
 * is usually synchronous (a tool that answers at once, a review that asks nobody) and only
 * sometimes waits, so a step that waits for nothing but the model pays for no promise, no
 * async frame and no microtask per function on its way. Measured when it came back (npm run
 * bench -- kernel, docs/architecture.md#performance): awaiting every layer, with two smaller
 * costs removed at the same time, took a fifth to a quarter of the kernel's CPU per step and a
 * quarter of its allocation.
 */
export type SyncOrAsync<T> = T | Promise<T>

/** True when `value` must be waited for. The kernel's own functions only return native promises. */
export function isPromise<T>(value: SyncOrAsync<T>): value is Promise<T> {
  return value instanceof Promise
}
