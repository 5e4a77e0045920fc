import { sha256Hex } from '../../security/sha256'

/** A new run's id when no key names it. */
export function newRunId(): string {
  return `run_${crypto.randomUUID().replaceAll('-', '')}`
}

/** The run id an idempotency key gives (the same key always names the same run). */
export async function idFromKey(key: string): Promise<string> {
  return `run_${(await sha256Hex(`edgeloop-run:${key}`)).slice(0, 32)}`
}
