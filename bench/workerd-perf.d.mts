/** The kinds of workerd work, by label (stackKind gives an index into it). */
export const KINDS: string[]
export function perfUsable(): Promise<boolean>
export function perfShares(
  pid: number,
  work: () => Promise<unknown>,
): Promise<{ samples: number; shares: number[] }>
export function classify(script: string): { samples: number; shares: number[] }
export function stackKind(stack: string): number
