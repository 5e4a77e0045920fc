/**
 * The part of zod's classic API (`zod/v4`) the MCP SDK builds its protocol schemas with, made of
 * zod/mini: wrangler.toml's `[alias]` puts it in place of `zod/v4`, which only the SDK imports.
 * The classic API carries every schema type and method (about 12 KiB gzip of the Worker); the
 * SDK's `types.js` chains a dozen methods, and at run time only parses with `safeParse` and reads
 * `_zod.def`, which are zod's core either way. Each method here does what classic's does (the
 * same core checks and clones, docs/architecture.md#performance); a method the SDK starts to use
 * that is missing here fails when the Worker loads, in every MCP test.
 */
import * as z from 'zod/mini'
import { config, globalConfig, globalRegistry, memoizer, util, type $ZodType } from 'zod/v4/core'
import en from 'zod/v4/locales/en.js'

// Classic sets these two on first use, for every zod schema of the Worker, ours included: the
// English messages our 4xx bodies show, and the parse memoizer.
if (!globalConfig.localeError) config(en())
if (!globalConfig.memoizer) config({ memoizer: memoizer() })

/* eslint-disable @typescript-eslint/no-explicit-any -- a runtime stand-in, typed by zod's own */
type Schema = any

/** `min`/`max` by the schema's type, as classic's string, number and array schemas define them. */
function bound(s: Schema, side: 'min' | 'max', n: number, params?: unknown): Schema {
  const type = s._zod.def.type
  if (type === 'number')
    return s.check(side === 'min' ? z.gte(n, params as never) : z.lte(n, params as never))
  if (type === 'string' || type === 'array') {
    return s.check(
      side === 'min' ? z.minLength(n, params as never) : z.maxLength(n, params as never),
    )
  }
  throw new Error(`zod-classic-for-sdk: .${side}() on a ${type} schema`)
}

const catchall = (s: Schema, schema: unknown): Schema =>
  s.clone(util.mergeDefs(s._zod.def, { catchall: schema }))

/** The classic methods the SDK calls, on a zod/mini schema; every result gets them too. */
function classic<T extends $ZodType>(schema: T): T {
  const s = schema as Schema
  if (s.optional) return schema
  Object.assign(s, {
    optional: () => classic(z.optional(s)),
    default: (value: unknown) => classic(z._default(s, value as never)),
    or: (other: Schema) => classic(z.union([s, other])),
    refine: (fn: (v: unknown) => unknown, params?: unknown) =>
      classic(s.check(z.refine(fn, params as never))),
    describe: (description: string) => {
      const copy = s.clone()
      globalRegistry.add(copy, { description })
      return classic(copy)
    },
    min: (n: number, params?: unknown) => classic(bound(s, 'min', n, params)),
    max: (n: number, params?: unknown) => classic(bound(s, 'max', n, params)),
    int: (params?: unknown) => classic(s.check(z.int(params as never))),
    nonnegative: (params?: unknown) => classic(s.check(z.nonnegative(params as never))),
    url: (params?: unknown) => classic(s.check(z.url(params as never))),
    startsWith: (prefix: string, params?: unknown) =>
      classic(s.check(z.startsWith(prefix, params as never))),
    extend: (shape: Record<string, unknown>) => classic(z.extend(s, shape as never)),
    merge: (other: Schema) => classic(z.merge(s, other)),
    catchall: (schema: unknown) => classic(catchall(s, schema)),
    loose: () => classic(catchall(s, z.unknown())),
    passthrough: () => classic(catchall(s, z.unknown())),
    strict: () => classic(catchall(s, z.never())),
  })
  return schema
}

/** Wraps a zod/mini constructor so what it makes has the classic methods. */
const make =
  <A extends unknown[]>(fn: (...args: A) => $ZodType) =>
  (...args: A): Schema =>
    classic(fn(...args))

export const string = make(z.string)
export const number = make(z.number)
export const boolean = make(z.boolean)
export const literal = make(z.literal as (...args: unknown[]) => $ZodType)
export const object = make(z.object as (...args: unknown[]) => $ZodType)
export const looseObject = make(z.looseObject as (...args: unknown[]) => $ZodType)
export const array = make(z.array as (...args: unknown[]) => $ZodType)
export const record = make(z.record as (...args: unknown[]) => $ZodType)
export const union = make(z.union as (...args: unknown[]) => $ZodType)
export const discriminatedUnion = make(z.discriminatedUnion as (...args: unknown[]) => $ZodType)
export const intersection = make(z.intersection as (...args: unknown[]) => $ZodType)
export const optional = make(z.optional as (...args: unknown[]) => $ZodType)
export const unknown = make(z.unknown)
export const never = make(z.never)
export const custom = make(z.custom as (...args: unknown[]) => $ZodType)
const _enum = make(z.enum as (...args: unknown[]) => $ZodType)
const _null = make(z.null)
export { _enum as enum, _null as null }
/** Classic's `preprocess`: a pipe from a transform into the schema. */
export const preprocess = (fn: (value: unknown) => unknown, schema: Schema): Schema =>
  classic(z.pipe(z.transform(fn), schema))
export const iso = { datetime: make(z.iso.datetime as (...args: unknown[]) => $ZodType) }
