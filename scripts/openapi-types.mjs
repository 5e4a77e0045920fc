// TypeScript declarations from an OpenAPI document's component schemas: the types of the
// installable client (src/client/api-types.ts). A pure function, so the check that the committed
// file matches what the service serves can run it anywhere (test/client/api-types.test.ts).

const HEADER = `// Generated from the service's /openapi.json by \`npm run client:types\`: do not edit.
// test/client/api-types.test.ts fails when this file and the served document disagree.
`

/** The declarations for every schema of `doc.components.schemas`, as the text of one module. */
export function openApiTypes(doc) {
  const schemas = doc?.components?.schemas
  if (!schemas || typeof schemas !== 'object') {
    throw new TypeError('openApiTypes needs an OpenAPI document with components.schemas')
  }
  // An inlined copy of a component (zod inlines every use) is written as the component's name.
  const named = new Map(Object.entries(schemas).map(([name, s]) => [canonical(s), name]))
  const blocks = Object.entries(schemas).map(([name, schema]) => {
    const body = typeOf(schema, '', named, name)
    const doc = comment(schema.description, '')
    if (body.startsWith('{')) return `${doc}export interface ${name} ${body}\n`
    return `${doc}export type ${name} =${body.startsWith('\n') ? '' : ' '}${body}\n`
  })
  return `${HEADER}\n${blocks.join('\n')}`
}

function typeOf(schema, indent, named, self) {
  if (schema === true || schema === undefined) return 'unknown'
  if (schema === false) return 'never'
  const name = named.get(canonical(schema))
  if (name && name !== self) return name
  if (schema.$ref) return schema.$ref.split('/').at(-1)
  if ('const' in schema) return literal(schema.const)
  if (schema.enum || schema.anyOf || schema.oneOf || Array.isArray(schema.type)) {
    return union(members(schema, `${indent}  `, named), indent)
  }
  switch (schema.type) {
    case 'string':
      return 'string'
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'null':
      return 'null'
    case 'array': {
      const item = typeOf(schema.items, indent, named)
      return /^[\w']+$/.test(item) ? `${item}[]` : `Array<${item}>`
    }
    case 'object':
      return objectType(schema, indent, named)
    default:
      return 'unknown'
  }
}

function objectType(schema, indent, named) {
  const properties = Object.entries(schema.properties ?? {})
  const extra = schema.additionalProperties
  if (properties.length === 0) {
    return extra === false
      ? 'Record<string, never>'
      : `Record<string, ${typeOf(extra, indent, named)}>`
  }
  const required = new Set(schema.required ?? [])
  const inner = `${indent}  `
  const lines = properties.map(([key, value]) => {
    const optional = required.has(key) ? '' : '?'
    const type = typeOf(value, inner, named)
    const gap = type.startsWith('\n') ? '' : ' '
    return `${comment(value.description, inner)}${inner}${property(key)}${optional}:${gap}${type}`
  })
  if (extra !== undefined && extra !== false) {
    lines.push(`${inner}[key: string]: ${typeOf(extra, inner, named)}`)
  }
  return `{\n${lines.join('\n')}\n${indent}}`
}

/** The alternatives of an enum or a union, nested unions flattened. */
function members(schema, indent, named) {
  if (schema.enum) return schema.enum.map(literal)
  const alternatives = schema.anyOf ?? schema.oneOf
  const parts = alternatives ?? schema.type.map((type) => ({ ...schema, type }))
  return parts.flatMap((s) => {
    if (named.has(canonical(s)) || !(s.enum || s.anyOf || s.oneOf || Array.isArray(s.type))) {
      return [typeOf(s, indent, named)]
    }
    return members(s, indent, named)
  })
}

function literal(value) {
  if (typeof value !== 'string') return JSON.stringify(value)
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

/** `a | b` on one line when short, else one alternative per line. */
function union(types, indent) {
  const line = types.join(' | ')
  if (line.length <= 60 && !line.includes('\n')) return line
  return types.map((t) => `\n${indent}  | ${t}`).join('')
}

function property(key) {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? key : literal(key)
}

function comment(text, indent) {
  return typeof text === 'string' && text
    ? `${indent}/** ${text.replace(/\*\//g, '*\\/')} */\n`
    : ''
}

/** A schema as text with its keys sorted, for recognising copies. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`
  }
  return JSON.stringify(value)
}
