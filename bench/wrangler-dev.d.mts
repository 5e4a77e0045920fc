/** Types of wrangler-dev.mjs, for the Node tests that start the service (test/node). */
export function startWranglerDev(
  root: string,
  vars: Record<string, string>,
  options?: { timeoutMs?: number; config?: string },
): Promise<{ baseUrl: string; stop: () => void }>
export function percentiles(ms: number[]): { median: number; p99: number; n: number }
