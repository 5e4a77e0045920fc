/**
 * A run's output schema (docs/agents.md#structured-answers): the JSON Schema its final answer
 * must match, checked by @cfworker/json-schema, which interprets the schema instead of generating
 * code (Workers forbid `eval`). A schema itself, an agent's or one a caller sends, is bounded and
 * its keywords checked in one walk (./schema-vocabulary.ts).
 */
import { Validator, type OutputUnit, type Schema, type SchemaDraft } from '@cfworker/json-schema'
import { jsonDepth } from './json-walk'
import { vocabularyProblems } from './schema-vocabulary'

/** Problems named in one format error; the rest are counted. */
const MAX_PROBLEMS = 8

// Errors that only say "something inside did not match": the inner error says what.
const WRAPPERS = new Set([
  'properties',
  'items',
  'prefixItems',
  'allOf',
  '$ref',
  'additionalProperties',
])

const validators = new WeakMap<object, Validator>()

/** Each place where `value` fails `schema`, as `answer.path: what was expected`; empty: valid. */
export function outputProblems(schema: Record<string, unknown>, value: unknown): string[] {
  let validator = validators.get(schema)
  if (!validator) {
    validator = new Validator(schema as Schema, draftOf(schema), false)
    validators.set(schema, validator)
  }
  const result = validator.validate(value)
  if (result.valid) return []
  const units = leafErrors(result.errors)
  const seen = new Set<string>()
  const lines: string[] = []
  for (const unit of units) {
    const what = unit.error.replace(/^Instance /, 'value ').replace(/\.$/, '')
    const line = `${pathOf(unit.instanceLocation)}: ${what}`
    if (seen.has(line)) continue
    seen.add(line)
    lines.push(line)
  }
  return capped(lines)
}

/** The first MAX_PROBLEMS lines, and how many more there are. */
function capped(lines: string[]): string[] {
  const shown = lines.slice(0, MAX_PROBLEMS)
  if (lines.length > shown.length) shown.push(`(${lines.length - shown.length} more)`)
  return shown
}

function leafErrors(errors: readonly OutputUnit[]): OutputUnit[] {
  const leaves = errors.filter((e) => !WRAPPERS.has(e.keyword))
  return leaves.length ? leaves : [...errors]
}

/** `#/items/0/name` → `answer.items[0].name`. */
function pathOf(location: string): string {
  const parts = location
    .replace(/^#\/?/, '')
    .split('/')
    .filter((s) => s !== '')
    .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'))
  return parts.reduce((path, p) => (/^\d+$/.test(p) ? `${path}[${p}]` : `${path}.${p}`), 'answer')
}

/** The draft a schema declares in `$schema`; else 2020-12 (what zod writes). */
function draftOf(schema: Record<string, unknown>): SchemaDraft {
  const declared = typeof schema.$schema === 'string' ? schema.$schema : ''
  if (/draft-04/.test(declared)) return '4'
  if (/draft-07|draft-06/.test(declared)) return '7'
  if (/2019-09/.test(declared)) return '2019-09'
  return '2020-12'
}

/** Bounds of an output schema: serialized characters and nesting depth. */
export const MAX_OUTPUT_SCHEMA_CHARS = 16_384
export const MAX_OUTPUT_SCHEMA_DEPTH = 12

/**
 * What is wrong with `schema` as an output schema: too large or deep, not an object schema,
 * a keyword holding the wrong kind of value, a remote `$ref`, a pattern that is no regex. Empty:
 * it may be used.
 */
export function outputSchemaProblems(schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return ['must be a JSON Schema object']
  }
  // Depth first, counted without recursion and only so far: a schema nested thousands of levels
  // deep must be refused, never overflow the stack in the serializing or the checking below.
  const depth = jsonDepth(schema, MAX_OUTPUT_SCHEMA_DEPTH)
  if (depth > MAX_OUTPUT_SCHEMA_DEPTH) {
    return [
      `nests more than ${MAX_OUTPUT_SCHEMA_DEPTH} levels deep; at most ${MAX_OUTPUT_SCHEMA_DEPTH}`,
    ]
  }
  const text = JSON.stringify(schema)
  if (text.length > MAX_OUTPUT_SCHEMA_CHARS) {
    return [`is ${text.length} characters; at most ${MAX_OUTPUT_SCHEMA_CHARS}`]
  }
  return capped(vocabularyProblems(schema as Record<string, unknown>))
}
