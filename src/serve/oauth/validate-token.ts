import { OAuthError, type ValidatedAccessToken } from '@cloudflare/workers-oauth-provider'
import { apiTokensFromEnv } from '../../config/security'
import type { EnvRecord } from '../../config'
import type { Env } from '../../env'
import { findToken } from '../../security/api-tokens'
import { callerFromGrant, REVOKED } from './grant'
import type { ServedCaller } from './served-caller-type'

/**
 * A served resource's token check: an API token is itself a bearer token there (its own name and
 * scopes), checked first, in constant time and without a storage read; anything else must be an
 * access token the authorization server issued for this resource, whose API token still stands.
 * Null answers the `401` challenge; a revoked API token is an `invalid_token` that says why.
 */
export async function validateServedToken(
  env: Env,
  presented: string,
  resource: string,
  issued: (token: string) => Promise<ValidatedAccessToken<unknown> | null>,
) {
  const token = await findToken(
    apiTokensFromEnv(env as unknown as EnvRecord),
    presented,
    env.API_TOKEN,
  )
  if (token) {
    const caller: ServedCaller = {
      kind: 'token',
      name: token.name,
      scopes: token.scopes,
      runs: token.runs,
    }
    return { props: caller, audience: resource, scope: [...token.scopes], userId: token.name }
  }
  const access = await issued(presented)
  if (!access) return null
  const caller = await callerFromGrant(access.props, access.scope, env, access.clientId)
  if (!caller) throw new OAuthError('invalid_token', { description: REVOKED })
  return {
    props: caller,
    audience: access.audience,
    expiresAt: access.expiresAt,
    scope: [...caller.scopes],
    userId: access.userId,
    clientId: access.clientId,
  }
}
