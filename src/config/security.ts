/**
 * Who may call and where callbacks may go: API_TOKENS, API_APPROVES_SLACK_RUNS
 * and CALLBACK_ALLOWLIST, validated with the rest of the configuration.
 */
import { compileAllowlist, type HostAllowlist } from '../../tools/http-allowlist'
import { parseApiTokens, type ApiToken } from '../security/api-tokens'
import { ConfigError } from '../errors/config-error'
import * as setting from '../settings/setting'
import { readSettings, type EnvRecord } from '../settings/setting'

export interface SecurityConfig {
  /** API_TOKENS plus the legacy API_TOKEN as `api`. */
  apiTokens: ApiToken[]
  /** Whether tokens with approvals:write may decide approvals of Slack-started runs. */
  apiApprovesSlackRuns: boolean
  /** CALLBACK_ALLOWLIST compiled (host and port, http only where written); absent when empty. */
  callbackHosts?: HostAllowlist
}

const SECURITY_SETTINGS = {
  API_APPROVES_SLACK_RUNS: setting.flag(),
  CALLBACK_ALLOWLIST: setting.parsedBy((raw) => {
    const entries = setting.splitList(raw)
    return entries.length ? compileAllowlist('CALLBACK_ALLOWLIST', entries) : undefined
  }),
}

/** Reads and validates the security settings; throws a ConfigError naming the variable. */
export function securityConfigFromEnv(env: EnvRecord): SecurityConfig {
  const s = readSettings(env, SECURITY_SETTINGS)
  return {
    apiTokens: apiTokensFromEnv(env),
    apiApprovesSlackRuns: s.API_APPROVES_SLACK_RUNS,
    ...(s.CALLBACK_ALLOWLIST ? { callbackHosts: s.CALLBACK_ALLOWLIST } : {}),
  }
}

/**
 * API_TOKENS and API_TOKEN. Not read through `readSetting`: a secret's raw value must never be
 * echoed into a 503 (an entry holding a token instead of its hash would be shown to anyone).
 */
export function apiTokensFromEnv(env: EnvRecord): ApiToken[] {
  const text = (name: string) => (typeof env[name] === 'string' ? (env[name] as string) : undefined)
  try {
    return parseApiTokens(text('API_TOKENS'), text('API_TOKEN'))
  } catch (err) {
    throw new ConfigError('API_TOKENS', (err as Error).message)
  }
}
