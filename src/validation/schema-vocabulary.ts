/**
 * The part of the JSON Schema vocabulary an output schema is checked against: what each keyword
 * holds, checked in one walk over the schema (docs/agents.md#structured-answers). Keywords not
 * listed are allowed (annotations, formats) and not looked into, as the specification allows.
 * One table and one walk instead of a meta-schema run through @cfworker/json-schema: the
 * validator's one large function was 12.8 KiB of the first run's compiling and its first call
 * 3–17 ms (docs/decisions.md#output-schemas-checked-in-one-walk).
 */

const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'])

/** What a keyword's value must be; `map`, `list` and `choices` hold schemas, `schema` is one. */
type Kind =
  | 'schema'
  | 'map'
  | 'list'
  | 'choices'
  | 'types'
  | 'names'
  | 'values'
  | 'number'
  | 'positive'
  | 'count'
  | 'boolean'
  | 'string'
  | 'ref'

const KEYWORDS: ReadonlyMap<string, Kind> = new Map(
  Object.entries({
    type: 'types',
    properties: 'map',
    patternProperties: 'map',
    additionalProperties: 'schema',
    items: 'schema',
    prefixItems: 'list',
    required: 'names',
    enum: 'values',
    anyOf: 'choices',
    oneOf: 'choices',
    allOf: 'choices',
    not: 'schema',
    $defs: 'map',
    definitions: 'map',
    minimum: 'number',
    maximum: 'number',
    exclusiveMinimum: 'number',
    exclusiveMaximum: 'number',
    multipleOf: 'positive',
    minLength: 'count',
    maxLength: 'count',
    minItems: 'count',
    maxItems: 'count',
    minProperties: 'count',
    maxProperties: 'count',
    uniqueItems: 'boolean',
    pattern: 'string',
    description: 'string',
    title: 'string',
    $ref: 'ref',
  } satisfies Record<string, Kind>),
)

const EXPECTED: Readonly<Record<Kind, string>> = {
  schema: 'a schema (an object or a boolean)',
  map: 'an object of schemas',
  list: 'an array of schemas',
  choices: 'a non-empty array of schemas',
  types: `one of ${[...TYPES].join(', ')}, or a non-empty array of them without repeats`,
  names: 'an array of strings without repeats',
  values: 'a non-empty array',
  number: 'a number',
  positive: 'a number above 0',
  count: 'an integer of 0 or more',
  boolean: 'true or false',
  string: 'a string',
  ref: 'a string starting with # (a reference inside the schema)',
}

/** Where a value sits: a schema, an object or array of schemas, or data (enum values, defaults…). */
type Place = 'schema' | 'map' | 'list' | 'data'

/**
 * What is wrong with the keywords of `schema` (an object whose depth the caller has bounded),
 * as `/pointer: what it must be`, and every `pattern` that is no regular expression; empty: none.
 * A `pattern` string anywhere in it is tried, as before this walk: it costs nothing and a bad one
 * would only fail later, when an answer is checked.
 */
export function vocabularyProblems(schema: Record<string, unknown>): string[] {
  const problems: string[] = []
  const stack: [unknown, string, Place][] = [[schema, '', 'schema']]
  while (stack.length) {
    const [node, at, place] = stack.pop()!
    if (place === 'schema' && !fits('schema', node)) {
      problems.push(`${at || '(root)'}: must be ${EXPECTED.schema}`)
      continue
    }
    if (typeof node !== 'object' || node === null) continue
    if (Array.isArray(node)) {
      const inner = place === 'list' ? 'schema' : 'data'
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], `${at}/${i}`, inner])
      continue
    }
    const record = node as Record<string, unknown>
    // A map's keys are property names, not keywords.
    if (place !== 'map' && typeof record.pattern === 'string' && !isRegExp(record.pattern)) {
      problems.push(`${at}/pattern: not a valid regular expression`)
    }
    // Checked in the schema's own order, walked into in the same order (a stack: pushed last first).
    const children = Object.keys(record).map(
      (key) =>
        [record[key], `${at}/${key}`, childPlace(place, key, record[key], problems, at)] as const,
    )
    for (let i = children.length - 1; i >= 0; i--) stack.push([...children[i]!])
  }
  return problems
}

/** Where `record[key]` sits, given where `record` does; a wrong kind of value becomes a problem. */
function childPlace(
  place: Place,
  key: string,
  value: unknown,
  problems: string[],
  at: string,
): Place {
  if (place === 'map') return 'schema'
  if (place !== 'schema') return 'data'
  const kind = KEYWORDS.get(key)
  if (kind === undefined) return 'data'
  if (!fits(kind, value)) {
    problems.push(`${at}/${key}: must be ${EXPECTED[kind]}`)
    return 'data'
  }
  if (key === 'patternProperties') {
    for (const name of Object.keys(value as object)) {
      if (!isRegExp(name)) problems.push(`${at}/${key}/${name}: not a valid regular expression`)
    }
  }
  if (kind === 'choices') return 'list'
  return kind === 'schema' || kind === 'map' || kind === 'list' ? kind : 'data'
}

function fits(kind: Kind, value: unknown): boolean {
  switch (kind) {
    case 'schema':
      return typeof value === 'boolean' || isRecord(value)
    case 'map':
      return isRecord(value)
    case 'list':
      return Array.isArray(value)
    case 'choices':
      return Array.isArray(value) && value.length > 0
    case 'types':
      return typeof value === 'string'
        ? TYPES.has(value)
        : Array.isArray(value) &&
            value.length > 0 &&
            value.every((t) => typeof t === 'string' && TYPES.has(t)) &&
            new Set(value).size === value.length
    case 'names':
      return (
        Array.isArray(value) &&
        value.every((n) => typeof n === 'string') &&
        new Set(value).size === value.length
      )
    case 'values':
      return Array.isArray(value) && value.length > 0
    case 'number':
      return typeof value === 'number'
    case 'positive':
      return typeof value === 'number' && value > 0
    case 'count':
      return Number.isInteger(value) && (value as number) >= 0
    case 'boolean':
      return typeof value === 'boolean'
    case 'string':
      return typeof value === 'string'
    case 'ref':
      return typeof value === 'string' && value.startsWith('#')
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isRegExp(source: string): boolean {
  try {
    new RegExp(source, 'u')
    return true
  } catch {
    return false
  }
}
