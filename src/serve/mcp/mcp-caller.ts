import type { RunVisibility, Scope } from '../../security/api-tokens'

/**
 * Who calls `/mcp`: an API token (routes/serve/mcp.ts authenticates it). Its name is what the
 * runs it starts record as requester and owner, as for `POST /v1/runs`.
 */
export interface McpCaller {
  name: string
  scopes: readonly Scope[]
  runs: RunVisibility
}
