import * as z from 'zod/mini'

/**
 * A final answer's schema as JSON Schema: a zod schema is converted (its output side, what a
 * parse gives), a JSON Schema object is taken as it is. Throws on anything else.
 */
export function jsonSchemaOf(schema: unknown): Record<string, unknown> {
  if (typeof schema === 'object' && schema !== null && '_zod' in schema) {
    return z.toJSONSchema(schema as z.core.$ZodType, { io: 'output' }) as Record<string, unknown>
  }
  if (typeof schema === 'object' && schema !== null && !Array.isArray(schema)) {
    return schema as Record<string, unknown>
  }
  throw new TypeError('an output schema must be a zod schema or a JSON Schema object')
}
