/** The kinds of workerd work, by label (stackKind gives an index into it). */
export const KINDS: string[]
export function perfUsable(): Promise<boolean>
export function startPerfWorker(
  outbound: (request: Request) => Promise<Response>,
  bindings?: Record<string, string>,
): Promise<{ rt: { pid: number }; stop: () => Promise<void> }>
export function perfShares(
  pid: number,
  work: () => Promise<unknown>,
): Promise<{ samples: number; shares: number[] }>
/** `perf script`'s stacks of process `pid` while `work()` runs, blank-line separated. */
export function perfStacks(pid: number, work: () => Promise<unknown>): Promise<string>
/** Samples a second of CPU. */
export const FREQUENCY: number
export function classify(script: string): { samples: number; shares: number[] }
export function stackKind(stack: string): number
