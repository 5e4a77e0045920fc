import { compileAllowlist, type HostAllowlist } from './http-allowlist'

/** How an HTTP tool is configured (`createHttpGetTool`, `createHttpPostTool`). */
export interface HttpToolOptions {
  /** Hosts it may reach: `docs.example.com`, `host:8787` or `*.example.com`. */
  allowlist: string[]
  /** Body bytes read at most; the rest is cut (default 200 000). */
  maxBytes?: number
  /** The tool's timeout, enforced by dispatch through `ctx.signal` (default 10 000). */
  timeoutMs?: number
}

export interface ResolvedHttpOptions {
  allowlist: HostAllowlist
  maxBytes: number
  timeoutMs: number
}

export const DEFAULT_HTTP_MAX_BYTES = 200_000
export const DEFAULT_HTTP_TIMEOUT_MS = 10_000

/** Applies defaults and checks the options once, when the tool is built. */
export function resolveHttpOptions(
  toolName: string,
  options: HttpToolOptions,
): ResolvedHttpOptions {
  const maxBytes = options.maxBytes ?? DEFAULT_HTTP_MAX_BYTES
  const timeoutMs = options.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS
  if (!Number.isInteger(maxBytes) || maxBytes <= 0) {
    throw new TypeError(
      `${toolName}: maxBytes must be a positive whole number of bytes, got ${maxBytes}`,
    )
  }
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError(`${toolName}: timeoutMs must be a positive number of ms, got ${timeoutMs}`)
  }
  return { allowlist: compileAllowlist(toolName, options.allowlist), maxBytes, timeoutMs }
}
