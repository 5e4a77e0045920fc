/**
 * A run's output schema (docs/agents.md#structured-answers): the JSON Schema its final answer
 * must match, checked by @cfworker/json-schema, which interprets the schema instead of generating
 * code (Workers forbid `eval`). The same checker bounds and checks a schema a caller sends.
 */
import { Validator, type OutputUnit, type Schema, type SchemaDraft } from '@cfworker/json-schema'
import { jsonDepth } from './json-walk'

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

const TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']

// The part of the JSON Schema vocabulary a schema is checked against: what each keyword holds.
// Keywords not listed are allowed (annotations, formats), as the specification allows.
const META: Schema = {
  $defs: {
    schema: {
      type: ['object', 'boolean'],
      properties: {
        type: {
          anyOf: [
            { enum: TYPES },
            { type: 'array', items: { enum: TYPES }, minItems: 1, uniqueItems: true },
          ],
        },
        properties: { type: 'object', additionalProperties: { $ref: '#/$defs/schema' } },
        patternProperties: { type: 'object', additionalProperties: { $ref: '#/$defs/schema' } },
        additionalProperties: { $ref: '#/$defs/schema' },
        items: { $ref: '#/$defs/schema' },
        prefixItems: { type: 'array', items: { $ref: '#/$defs/schema' } },
        required: { type: 'array', items: { type: 'string' }, uniqueItems: true },
        enum: { type: 'array', minItems: 1 },
        anyOf: { type: 'array', minItems: 1, items: { $ref: '#/$defs/schema' } },
        oneOf: { type: 'array', minItems: 1, items: { $ref: '#/$defs/schema' } },
        allOf: { type: 'array', minItems: 1, items: { $ref: '#/$defs/schema' } },
        not: { $ref: '#/$defs/schema' },
        $defs: { type: 'object', additionalProperties: { $ref: '#/$defs/schema' } },
        definitions: { type: 'object', additionalProperties: { $ref: '#/$defs/schema' } },
        minimum: { type: 'number' },
        maximum: { type: 'number' },
        exclusiveMinimum: { type: 'number' },
        exclusiveMaximum: { type: 'number' },
        multipleOf: { type: 'number', exclusiveMinimum: 0 },
        minLength: { type: 'integer', minimum: 0 },
        maxLength: { type: 'integer', minimum: 0 },
        minItems: { type: 'integer', minimum: 0 },
        maxItems: { type: 'integer', minimum: 0 },
        minProperties: { type: 'integer', minimum: 0 },
        maxProperties: { type: 'integer', minimum: 0 },
        uniqueItems: { type: 'boolean' },
        pattern: { type: 'string' },
        description: { type: 'string' },
        title: { type: 'string' },
        $ref: { type: 'string', pattern: '^#' },
      },
    },
  },
  $ref: '#/$defs/schema',
}
const metaValidator = new Validator(META, '2020-12', false)

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
  const checked = metaValidator.validate(schema)
  if (!checked.valid) {
    return leafErrors(checked.errors)
      .slice(0, MAX_PROBLEMS)
      .map(
        (u) =>
          `${u.instanceLocation.replace(/^#/, '') || '(root)'}: ${u.error.replace(/^Instance /, 'value ')}`,
      )
  }
  const problems: string[] = []
  walk(schema, '', (node, at) => {
    if (typeof node.pattern === 'string') {
      try {
        new RegExp(node.pattern, 'u')
      } catch {
        problems.push(`${at}/pattern: not a valid regular expression`)
      }
    }
  })
  return problems
}

/** Visits every object in `root` with its JSON pointer, without recursion. */
function walk(
  root: unknown,
  at: string,
  visit: (node: Record<string, unknown>, at: string) => void,
): void {
  const stack: [unknown, string][] = [[root, at]]
  while (stack.length) {
    const [node, where] = stack.pop()!
    if (typeof node !== 'object' || node === null) continue
    if (!Array.isArray(node)) visit(node as Record<string, unknown>, where)
    const entries = Object.entries(node)
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, v] = entries[i]!
      stack.push([v, `${where}/${k}`])
    }
  }
}
