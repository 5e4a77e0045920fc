/** Types of first-run-timeline.mjs, for test/node. */
import type { WorkerBuild } from '../test/node/worker-runtime'

/** `build` with the timeline's wrapper as its entry (its lines read by timelineEvent). */
export function withTimeline(build: WorkerBuild): WorkerBuild
/** The event a line workerd logged holds, or undefined for another line. */
export function timelineEvent(
  line: string,
): { at: number; event: string; detail: string } | undefined
export function benchFirstRunTimeline(): Promise<string>
