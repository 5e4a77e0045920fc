/** A bundled Worker run in a workerd of its own for one test (see worker-runtime.ts). */
import { tempStorage, WorkerRuntime, type RuntimeOptions } from './worker-runtime'

/**
 * Starts `options.worker` in a fresh workerd with fresh Durable Object storage, hands it to
 * `use`, then stops it and removes the storage, whether `use` passed or threw.
 */
export async function withRuntime<T>(
  options: Omit<RuntimeOptions, 'storage'>,
  use: (rt: WorkerRuntime) => Promise<T>,
): Promise<T> {
  const dir = await tempStorage()
  try {
    const rt = await WorkerRuntime.start({ ...options, storage: dir.path })
    try {
      return await use(rt)
    } finally {
      await rt.stop()
    }
  } finally {
    await dir.remove()
  }
}
