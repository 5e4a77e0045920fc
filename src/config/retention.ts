/**
 * How long a finished run is kept (RUN_RETENTION_DAYS). Unset keeps runs forever. The run's
 * object reads this alone, not the whole configuration: a broken unrelated setting must not
 * change when runs are deleted, and a bad value here deletes nothing (readiness reports it).
 */
import * as setting from '../settings/setting'
import { readSetting, type EnvRecord } from '../settings/setting'

const DAY_MS = 86_400_000

export const RETENTION_SETTING = setting.number({ min: 1, max: 36_500, integer: true })

/** RUN_RETENTION_DAYS in ms; undefined when unset. Throws a ConfigError for a bad value. */
export function retentionMsFromEnv(env: EnvRecord): number | undefined {
  const days = readSetting(env, 'RUN_RETENTION_DAYS', RETENTION_SETTING)
  return days === undefined ? undefined : days * DAY_MS
}

/** The retention a run's object applies: none while the setting is unset or invalid. */
export function retentionMsOrNone(env: object): number | undefined {
  try {
    return retentionMsFromEnv(env as EnvRecord)
  } catch {
    return undefined
  }
}
