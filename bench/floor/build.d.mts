/** Types of build.mjs, for test/node. */
import type { WorkerBuild } from '../../test/node/worker-runtime'

/** The floor and its two variants, by the name the bench prints. */
export const FLOOR_VARIANTS: Record<string, { index: boolean; modelClient: 'openai' | 'fetch' }>
/** One variant of the floor bundled, as a WorkerBuild. */
export function bundleFloor(root: string, variant?: string): Promise<WorkerBuild>
