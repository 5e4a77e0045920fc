import { OAuthError, type TokenExchangeCallbackOptions } from '@cloudflare/workers-oauth-provider'
import { apiTokensFromEnv } from '../../config/security'
import type { EnvRecord } from '../../config'
import type { Env } from '../../env'
import { LEGACY_TOKEN_NAME, SCOPES, type ApiToken, type Scope } from '../../security/api-tokens'
import { timingSafeEqual } from '../../security/hmac'
import { sha256Hex } from '../../security/sha256'
import { logEvent } from '../../runs/log'
import type { ServedCaller } from './served-caller-type'

/**
 * What a grant carries (encrypted by the library with a key only the token holder unwraps): the
 * API token the person proved, by name and SHA-256. The hash, not the name alone, ties the grant
 * to that token: a token rotated under the same name does not inherit it.
 */
export interface GrantProps {
  token: string
  sha256: string
}

/** The props of a grant made by proving `token`, presented as `presented`. */
export async function grantPropsFor(token: ApiToken, presented: string): Promise<GrantProps> {
  return { token: token.name, sha256: token.sha256 || (await sha256Hex(presented)) }
}

/** The message a client gets when the token behind its grant is gone. */
export const REVOKED =
  'the API token this authorization was granted with was revoked or replaced; authorize again with a current token'

/**
 * The caller a grant stands for today, or null when its API token was revoked or rotated: the
 * token must still be in API_TOKENS (or be the legacy API_TOKEN) with the same SHA-256, and
 * only the granted scopes the token still holds count.
 */
export async function callerFromGrant(
  props: unknown,
  granted: readonly string[],
  env: Env,
  client?: string,
): Promise<ServedCaller | null> {
  if (!isGrantProps(props)) return null
  const token = apiTokensFromEnv(env as unknown as EnvRecord).find((t) => t.name === props.token)
  if (!token) return null
  const current =
    token.name === LEGACY_TOKEN_NAME && token.sha256 === ''
      ? await sha256Hex(env.API_TOKEN ?? '')
      : token.sha256
  if (!timingSafeEqual(current, props.sha256)) return null
  const scopes = SCOPES.filter((s) => granted.includes(s) && token.scopes.includes(s))
  return {
    kind: 'token',
    name: token.name,
    scopes,
    runs: token.runs,
    ...(client ? { client } : {}),
  }
}

/**
 * The token endpoint's check on a code or refresh exchange: a grant whose API token was revoked
 * ends (`invalid_grant` revokes it and its tokens); otherwise the new access token carries only
 * the granted scopes the API token still has.
 */
export async function refreshedGrant(options: TokenExchangeCallbackOptions<Env>) {
  const caller = await callerFromGrant(options.props, options.scope, options.env)
  if (!caller) {
    logEvent(
      options.env,
      'oauth_grant_ended',
      { token: options.userId, client: options.clientId, reason: 'api_token_revoked' },
      'warn',
    )
    throw new OAuthError('invalid_grant', { description: REVOKED })
  }
  const scope: Scope[] = caller.scopes.filter((s) => options.requestedScope.includes(s))
  return { accessTokenScope: scope }
}

function isGrantProps(value: unknown): value is GrantProps {
  const v = value as Partial<GrantProps> | null
  return typeof v?.token === 'string' && typeof v.sha256 === 'string'
}
