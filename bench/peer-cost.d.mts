/** Types of peer-cost.mjs, for test/node. */

/** The outside world of the bench's Workers: the fake model, the pages, the callbacks. */
export function network(): {
  delayMs: number
  /** Model calls and page reads, per system or build by name. */
  seen: Record<string, { model: number; pages: number }>
  /** The callback body of run `id`. */
  finished: (id: string) => Promise<{ ok: boolean } & Record<string, unknown>>
  outbound: (request: Request, who: string) => Promise<Response>
}
/** How each system and floor build starts a run and knows it is done. */
export const SYSTEMS: Record<
  string,
  {
    classes: string[]
    runClass: string
    run: (base: URL | string, net: ReturnType<typeof network>, n: number | string) => Promise<void>
  }
>
/** The settings every system runs the task with. */
export const TASK_BINDINGS: Record<string, string>
export function benchPeer(root: string): Promise<string>
/** One fresh process's runs: wall and CPU ms of the first, the second, the warm ones. */
export interface FreshStart {
  first: number
  cpu: number
  second: number
  warm: number
  warmCpu: number
  /** Whether every run made its model calls and page reads. */
  task: boolean
  resolution: number
}
/** The report's lines of the first run after a fresh start, per build. */
export function freshLines(fresh: Record<string, FreshStart[]>, batchWarm: number): string[]
