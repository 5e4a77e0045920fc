/**
 * Arguments checked against a JSON Schema (an MCP tool's `inputSchema`) with @cfworker/json-schema,
 * which interprets the schema instead of generating code: Workers forbid `eval`/`new Function`.
 */
import { Validator, type OutputUnit, type Schema, type SchemaDraft } from '@cfworker/json-schema'
import * as z from 'zod/mini'
import { MAX_JSON_DEPTH, tooDeep } from '../validation/json-walk'

// Errors that only say "something inside did not match": the inner error says what.
const WRAPPERS = new Set([
  'properties',
  'items',
  'prefixItems',
  'allOf',
  '$ref',
  'dependentSchemas',
])
const MAX_PROBLEMS = 5

/**
 * A zod object schema (what tool params are) whose check is `schema`. Throws on a bad schema,
 * and on one nested deeper than MAX_JSON_DEPTH (counted without recursion): the checker walks a
 * schema recursively, and a server's schema must not overflow the stack.
 */
export function jsonSchemaParams(schema: Record<string, unknown>) {
  if (tooDeep(schema)) {
    throw new Error(`its inputSchema nests more than ${MAX_JSON_DEPTH} levels deep`)
  }
  const validator = new Validator(schema as Schema, draftOf(schema), false)
  return z.looseObject({}).check(
    z.check((ctx) => {
      const result = validator.validate(ctx.value)
      if (result.valid) return
      for (const unit of leafErrors(result.errors).slice(0, MAX_PROBLEMS)) {
        ctx.issues.push({
          code: 'custom',
          message: unit.error.replace(/^Instance /, 'value '),
          input: ctx.value,
          path: pointerPath(unit.instanceLocation),
        })
      }
    }),
  )
}

function leafErrors(errors: readonly OutputUnit[]): OutputUnit[] {
  const leaves = errors.filter((e) => !WRAPPERS.has(e.keyword))
  return leaves.length ? leaves : [...errors]
}

/** `#/items/0/name` → ['items', '0', 'name']. */
function pointerPath(location: string): string[] {
  return location
    .replace(/^#\/?/, '')
    .split('/')
    .filter((s) => s !== '')
    .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'))
}

/** The draft a schema declares in `$schema` (MCP servers often send draft-07); else 2020-12. */
function draftOf(schema: Record<string, unknown>): SchemaDraft {
  const declared = typeof schema.$schema === 'string' ? schema.$schema : ''
  if (/draft-04/.test(declared)) return '4'
  if (/draft-07|draft-06/.test(declared)) return '7'
  if (/2019-09/.test(declared)) return '2019-09'
  return '2020-12'
}
