/** The module wrangler.toml's `[alias]` and vitest.config.ts point the transport at. */
export const SLIM_MCP_TRANSPORT: string
/** Writes SLIM_MCP_TRANSPORT unless it is current; returns its path. */
export function buildSlimMcpTransport(): string
