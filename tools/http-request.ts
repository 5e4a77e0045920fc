/**
 * Sends one request for an HTTP tool. `fetch` is looked up at call time (never captured at
 * import) so that test fakes reach it; redirects are never followed by fetch itself, because
 * every hop must be checked against the allowlist first.
 */
export async function sendRequest(
  url: URL,
  init: RequestInit,
  signal: AbortSignal,
): Promise<Response> {
  const method = init.method ?? 'GET'
  if (signal.aborted) throw new Error(`${method} ${url.href} was not sent: ${reasonOf(signal)}`)
  try {
    return await fetch(url, { ...init, method, redirect: 'manual', signal })
  } catch (err) {
    if (signal.aborted) throw new Error(`${method} ${url.href} was aborted: ${reasonOf(signal)}`)
    const message = err instanceof Error ? err.message : String(err)
    throw new Error(
      `${method} ${url.href} failed before a response (${message}); check the URL, or try again later`,
    )
  }
}

function reasonOf(signal: AbortSignal): string {
  const reason: unknown = signal.reason
  return reason instanceof Error ? reason.message : String(reason ?? 'cancelled')
}
