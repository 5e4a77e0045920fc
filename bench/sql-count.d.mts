/** Types of sql-count.mjs, for test/node. */
import type { WorkerBuild } from '../test/node/worker-runtime'

export const COUNTS_PATH: string
export function withStorageCounts(build: WorkerBuild, classes: string[]): WorkerBuild
/** The counts since the last read (which starts counting afresh). */
export function storageCounts(baseUrl: URL | string): Promise<{
  statements: number
  writes: number
  rowsWritten: number
  kvWrites: number
  alarms: number
  /** How often each write statement ran, by its first 70 characters and a short first binding. */
  byStatement: Record<string, number>
}>
