/** Kinds of workerd work, each a label and a test of a sample's call stack. */
export const KINDS: [label: string, match: (stack: string) => boolean][]
export function perfUsable(): Promise<boolean>
export function perfShares(
  pid: number,
  work: () => Promise<unknown>,
): Promise<{ samples: number; shares: number[] }>
export function classify(script: string): { samples: number; shares: number[] }
