/**
 * The one vocabulary for reading environment variables. A `Setting` is a zod schema from the
 * variable's trimmed text (`undefined` when unset or empty: wrangler vars are often "") to its
 * value; `readSetting` applies it and turns a failure into a ConfigError that names the variable.
 * The service's own settings, the model's and every tool's (`tools/catalog.ts`) are read this way.
 */
import * as z from 'zod/mini'
import { safeParse, type $ZodType, type output } from 'zod/v4/core'
import { ConfigError } from '../errors/config-error'

/** How one variable is read. Issue messages complete "<NAME> …", e.g. "must be true or false". */
export type Setting<T = unknown> = $ZodType<T, string | undefined>

/** The Worker's env as the readers see it: vars and secrets by name. */
export type EnvRecord = Readonly<Record<string, unknown>>

/** Reads `name` from `env` with `setting`; throws a ConfigError naming the variable. */
export function readSetting<T>(env: EnvRecord, name: string, setting: Setting<T>): T {
  const value = env[name]
  const raw = typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined
  const result = safeParse(setting, raw)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  const path = issue?.path.length ? ` (at ${issue.path.join('.')})` : ''
  const problem = issue?.message ?? 'is not valid'
  const got = raw === undefined || raw.length > 200 ? '' : `; got ${JSON.stringify(raw)}`
  // A parser that already names the variable ("NAME: …") is not made to say it twice.
  const sentence = problem.startsWith(name) ? problem : `${name} ${problem}`
  throw new ConfigError(name, `${sentence}${path}${got}`)
}

/** Settings by variable name, as a tool or a part of the service declares them. */
export type Settings = Readonly<Record<string, Setting>>

/** The values of declared settings, by variable name. */
export type SettingValues<S extends Settings> = { -readonly [K in keyof S]: output<S[K]> }

/** Reads every declared setting; the first bad one is a ConfigError naming it. */
export function readSettings<S extends Settings>(env: EnvRecord, settings: S): SettingValues<S> {
  const values: Record<string, unknown> = {}
  for (const name of Object.keys(settings)) values[name] = readSetting(env, name, settings[name]!)
  return values as SettingValues<S>
}

/**
 * A setting read by a function: it returns the value, or throws an Error whose message says what
 * is wrong ("must be …"). The building block of the readers below, and for any parser a tool has.
 */
export function parsedBy<T>(read: (raw: string | undefined) => T): Setting<T> {
  return z.pipe(
    z.optional(z.string()),
    z.transform((raw: string | undefined, ctx) => {
      try {
        return read(raw)
      } catch (err) {
        ctx.issues.push({ code: 'custom', message: (err as Error).message, input: raw })
        return z.NEVER
      }
    }),
  ) as unknown as Setting<T>
}

/** Text, or `fallback` when unset. */
export function text(fallback: string): Setting<string>
export function text(): Setting<string | undefined>
export function text(fallback?: string): Setting<string | undefined> {
  return parsedBy((raw) => raw ?? fallback)
}

/** Comma-separated names: trimmed, empties and duplicates dropped; unset is `[]`. */
export function list(): Setting<string[]> {
  return parsedBy((raw) => splitList(raw))
}

/** `true`/`false` (also `1`/`0`, `yes`/`no`); unset is `false`. */
export function flag(): Setting<boolean> {
  return parsedBy((raw) => {
    if (raw === undefined || /^(0|false|no)$/i.test(raw)) return false
    if (/^(1|true|yes)$/i.test(raw)) return true
    throw new Error('must be true or false')
  })
}

/** One of `values`; unset is `fallback`. */
export function oneOf<const V extends string>(values: readonly V[], fallback: V): Setting<V> {
  return parsedBy((raw) => {
    const value = (raw ?? fallback) as V
    if (values.includes(value)) return value
    throw new Error(`must be one of ${values.join(', ')}`)
  })
}

interface NumberRule {
  min: number
  max?: number
  /** Whole numbers only. */
  integer?: boolean
}

/** A number within `rule`; unset is `fallback`. */
export function number(rule: NumberRule & { fallback: number }): Setting<number>
export function number(rule: NumberRule): Setting<number | undefined>
export function number(rule: NumberRule & { fallback?: number }): Setting<number | undefined> {
  const kind = rule.integer ? 'an integer' : 'a number'
  const range = rule.max === undefined ? `>= ${rule.min}` : `from ${rule.min} to ${rule.max}`
  return parsedBy((raw) => {
    if (raw === undefined) return rule.fallback
    const value = Number(raw)
    const ok =
      /^[+]?\d*\.?\d+(e[+-]?\d+)?$/i.test(raw) &&
      Number.isFinite(value) &&
      value >= rule.min &&
      (rule.max === undefined || value <= rule.max) &&
      (!rule.integer || Number.isInteger(value))
    if (ok) return value
    throw new Error(`must be ${kind} ${range}`)
  })
}

/** An absolute http(s) URL without trailing slashes; unset is `fallback`. */
export function httpUrl(fallback: string): Setting<string>
export function httpUrl(): Setting<string | undefined>
export function httpUrl(fallback?: string): Setting<string | undefined> {
  return parsedBy((raw) => {
    const value = raw ?? fallback
    if (value === undefined) return undefined
    let url: URL | undefined
    try {
      url = new URL(value)
    } catch {
      url = undefined
    }
    if (url?.protocol === 'https:' || url?.protocol === 'http:') return value.replace(/\/+$/, '')
    throw new Error(`must be an http(s) URL such as ${fallback ?? 'https://api.example.com/v1'}`)
  })
}

/** JSON text whose value `schema` accepts (`[]`-like `fallback` when unset). */
export function json<T>(schema: $ZodType<T>, fallback: T): Setting<T> {
  return parsedBy((raw) => {
    if (raw === undefined) return fallback
    let value: unknown
    try {
      value = JSON.parse(raw)
    } catch (err) {
      throw new Error(`must be JSON (${(err as Error).message})`)
    }
    const result = safeParse(schema, value)
    if (result.success) return result.data
    const issue = result.error.issues[0]!
    const at = issue.path.length ? `at ${issue.path.join('.')}: ` : ''
    throw new Error(`is not valid: ${at}${issue.message}`)
  })
}

/** `setting`, but unset is an error; `hint` says what to set, e.g. "list the hosts …". */
export function required<T>(setting: Setting<T | undefined>, hint: string): Setting<T> {
  return z.pipe(
    z.optional(z.string()),
    z.transform((raw: string | undefined, ctx) => {
      if (raw === undefined) {
        ctx.issues.push({ code: 'custom', message: `is required: ${hint}`, input: raw })
        return z.NEVER
      }
      const result = safeParse(setting, raw)
      if (result.success) return result.data as T
      ctx.issues.push(...result.error.issues.map((i) => ({ ...i, input: raw }) as never))
      return z.NEVER
    }),
  ) as unknown as Setting<T>
}

/** A comma-separated list as names: trimmed, empties and duplicates dropped. */
export function splitList(csv: string | undefined): string[] {
  const names = (csv ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
  return [...new Set(names)]
}
