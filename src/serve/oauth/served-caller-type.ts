import type { RunVisibility, Scope } from '../../security/api-tokens'

/**
 * Who calls a served resource: an API token by its name, with the scopes this request may use
 * and the runs it reaches, the same requester an API request has. Through OAuth the scopes are
 * those the person granted that are still the token's; `client` names the OAuth client.
 */
export interface ServedCaller {
  kind: 'token'
  name: string
  scopes: readonly Scope[]
  runs: RunVisibility
  /** The OAuth client acting for the token; absent for the API token itself. */
  client?: string
}
