/** Types of workerd-cpu.mjs, for test/node. */
import type { WorkerBuild, WorkerRuntime } from '../test/node/worker-runtime'

export function cpuMs(pid: number): number
export function cpuResolutionMs(pid: number): number
export const median: (xs: number[]) => number
export const sleep: (ms: number) => Promise<void>
export const MODEL_HOST: string
export const CALLBACK_HOST: string
/** The bench's workerd running `worker` (or the deployed bundle) with the bench's settings. */
export function startBenchWorker(
  outbound: (request: Request) => Promise<Response>,
  bindings?: Record<string, string>,
  options?: { worker?: WorkerBuild; onLog?: (line: string) => void },
): Promise<{ rt: WorkerRuntime; storage: string; stop: () => Promise<void> }>
