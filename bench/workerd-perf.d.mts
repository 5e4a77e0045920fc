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
export function classify(script: string): { samples: number; shares: number[] }
export function stackKind(stack: string): number
