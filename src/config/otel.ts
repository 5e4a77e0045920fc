/**
 * Trace export settings, named as every OpenTelemetry SDK names them: OTEL_EXPORTER_OTLP_ENDPOINT
 * (the collector's base URL; traces go to `<base>/v1/traces`) or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
 * (the full traces URL, used as is), OTEL_EXPORTER_OTLP_HEADERS (a secret: `key=value,…`, values
 * percent-decoded), OTEL_SERVICE_NAME, and OTEL_CAPTURE_CONTENT (prompts and completions, redacted;
 * off by default). Read alone by a run's object, like retention: a broken unrelated setting must
 * not stop the export of what runs did.
 */
import * as setting from '../settings/setting'
import { readSettings, type EnvRecord } from '../settings/setting'
import { ConfigError } from '../errors/config-error'

export interface OtelConfig {
  /** Where OTLP/HTTP JSON batches are POSTed. */
  tracesUrl: string
  headers: Record<string, string>
  serviceName: string
  captureContent: boolean
}

const OTEL_SETTINGS = {
  OTEL_EXPORTER_OTLP_ENDPOINT: setting.httpUrl(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: setting.parsedBy((raw) => {
    if (raw === undefined) return undefined
    if (!/^https?:\/\/[^/]/.test(raw) || !URL.canParse(raw))
      throw new Error('must be an http(s) URL such as https://collector.example.com/v1/traces')
    return raw
  }),
  OTEL_SERVICE_NAME: setting.text('edgeloop'),
  OTEL_CAPTURE_CONTENT: setting.flag(),
}

/** The export settings; undefined when no endpoint is set. Throws a ConfigError for a bad one. */
export function otelConfigFromEnv(env: EnvRecord): OtelConfig | undefined {
  const s = readSettings(env, OTEL_SETTINGS)
  const tracesUrl =
    s.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (s.OTEL_EXPORTER_OTLP_ENDPOINT ? tracesUrlOf(s.OTEL_EXPORTER_OTLP_ENDPOINT) : undefined)
  if (!tracesUrl) return undefined
  return {
    tracesUrl,
    headers: otlpHeadersFromEnv(env),
    serviceName: s.OTEL_SERVICE_NAME,
    captureContent: s.OTEL_CAPTURE_CONTENT,
  }
}

/**
 * `<base>/v1/traces`, built with the URL API: the path gains `/v1/traces` (one slash), and a query
 * the base carries (`?key=K`, as some collectors take their key) stays the query.
 */
export function tracesUrlOf(base: string): string {
  const url = new URL(base)
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`
  return url.toString()
}

/** Every variable `otelConfigFromEnv` reads. */
const OTEL_VARIABLES = [...Object.keys(OTEL_SETTINGS), 'OTEL_EXPORTER_OTLP_HEADERS']

/**
 * The last answer of `otelOrNone` and the values it was read from. A run's object asks at every
 * transition it saves; reading the settings anew each time was about 0.3 ms of a two-call run's
 * Worker CPU (docs/development.md#the-peer-bench). Keyed by the values, not the env object:
 * tests change settings in place.
 */
let lastRead: { values: unknown[]; config: OtelConfig | undefined } | undefined

/** What a run's object exports with: nothing while the settings are unset or invalid. */
export function otelOrNone(env: object): OtelConfig | undefined {
  const values = OTEL_VARIABLES.map((name) => (env as EnvRecord)[name])
  if (lastRead?.values.every((v, i) => v === values[i])) return lastRead.config
  let config: OtelConfig | undefined
  try {
    config = otelConfigFromEnv(env as EnvRecord)
  } catch {
    config = undefined
  }
  lastRead = { values, config }
  return config
}

/** Not read through `readSetting`, whose messages quote the value: this one is a secret. */
function otlpHeadersFromEnv(env: EnvRecord): Record<string, string> {
  const raw = env.OTEL_EXPORTER_OTLP_HEADERS
  try {
    return parseOtlpHeaders(typeof raw === 'string' ? raw : undefined)
  } catch (err) {
    const name = 'OTEL_EXPORTER_OTLP_HEADERS'
    throw new ConfigError(name, `${name} ${(err as Error).message}`)
  }
}

/**
 * `OTEL_EXPORTER_OTLP_HEADERS`: comma-separated `key=value` pairs, values percent-encoded (the
 * OpenTelemetry specification's format, e.g. `x-honeycomb-team=abc,x-honeycomb-dataset=runs`).
 */
export function parseOtlpHeaders(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const pair of (raw ?? '').split(',')) {
    if (!pair.trim()) continue
    const at = pair.indexOf('=')
    const key = at > 0 ? pair.slice(0, at).trim() : ''
    // The message never quotes the value: it is a secret.
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key) || at < 0)
      throw new Error('must be comma-separated key=value pairs (e.g. authorization=Basic%20…)')
    let value: string
    try {
      value = decodeURIComponent(pair.slice(at + 1).trim())
    } catch {
      throw new Error(`has a value for ${key} that is not percent-encoded correctly`)
    }
    headers[key.toLowerCase()] = value
  }
  return headers
}
