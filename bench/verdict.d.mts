/** Types of verdict.mjs, for the benches written in TypeScript and test/node. */
export const NO_MEASUREMENT: string
export type Figures = Record<
  string,
  number | undefined | null | [number | undefined | null, number]
>
export function unmeasured(figures: Figures): string | undefined
export function judge(figures: Figures, ok: () => boolean): string
export function verdictLine(figures: Figures, ok: () => boolean, text: string): string
export function missedGoal(line: string): boolean
export function waitReady(
  what: string,
  ready: () => boolean | Promise<boolean>,
  options?: { seconds?: number; pollMs?: number },
): Promise<void>
export function readySeconds(seconds: number): number
export class ReadinessTimeout extends Error {
  constructor(what: string, seconds: number)
}
export function within<T>(what: string, promise: Promise<T>, seconds?: number): Promise<T>
