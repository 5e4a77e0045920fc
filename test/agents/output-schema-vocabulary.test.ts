/**
 * An output schema's keywords are checked where the agent is (docs/agents.md#structured-answers):
 * each keyword of the vocabulary holding the wrong kind of value is named with its place, the
 * rest of the schema is left as the specification leaves it.
 */
import { describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { defineAgent } from '../../agents/index'
import { resolveAgents, type AgentLimits } from '../../src/config/agents'
import { DEFAULT_BUDGET } from '../../src/kernel/budget'
import { modelConfigFromEnv } from '../../src/config'

const limits: AgentLimits = {
  enabledTools: ['calculator'],
  mcpServers: [],
  policy: { mode: 'ask' },
  maxBudget: DEFAULT_BUDGET,
  defaultBudget: DEFAULT_BUDGET,
  model: modelConfigFromEnv({ MODEL: 'gpt-test', OPENAI_API_KEY: 'sk-x' }),
}
const base = { description: 'd', instructions: 'i' }

/** The problems of an agent whose output is `output`, as the loader reports them. */
function outputProblems(output: unknown): string[] {
  try {
    resolveAgents(['shaped'], limits, [
      defineAgent({ name: 'default', ...base }),
      defineAgent({ name: 'shaped', ...base, output: output as Record<string, unknown> }),
    ])
    return []
  } catch (err) {
    return (err as { problems: { field: string; message: string }[] }).problems.map(
      (p) => `${p.field}: ${p.message}`,
    )
  }
}

describe('an agent output schema checked keyword by keyword', () => {
  it('takes a schema using the whole vocabulary, boolean schemas and unknown keywords', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: 'Ticket',
      description: 'One ticket',
      type: 'object',
      properties: {
        id: { type: ['string', 'null'], pattern: '^T-[0-9]+$', minLength: 3, maxLength: 20 },
        score: { type: 'number', minimum: 0, maximum: 1, exclusiveMinimum: -1, multipleOf: 0.5 },
        count: { type: 'integer', exclusiveMaximum: 100 },
        tags: { type: 'array', items: { type: 'string' }, minItems: 0, uniqueItems: true },
        pair: { type: 'array', prefixItems: [{ type: 'string' }, true], maxItems: 2 },
        kind: { enum: ['a', 'b', null] },
        any: { anyOf: [{ type: 'string' }, { $ref: '#/$defs/n' }] },
        one: { oneOf: [{ type: 'boolean' }, false] },
        all: { allOf: [{ minProperties: 1 }, { maxProperties: 4 }] },
        never: { not: {} },
        extra: { patternProperties: { '^x-': { type: 'string' } } },
        // Not in the vocabulary: allowed and not looked into.
        when: { format: 'date-time', const: 3, if: { minimum: 'not looked at' } },
      },
      required: ['id', 'score'],
      additionalProperties: false,
      $defs: { n: { type: 'number' } },
      definitions: { s: true },
    }
    expect(outputProblems(schema)).toEqual([])
  })

  it('takes a zod schema as converted, its output side', () => {
    const schema = z.object({
      severity: z.enum(['sev1', 'sev2']),
      note: z.optional(z.string().check(z.regex(/^[a-z]+$/))),
      items: z.array(z.union([z.number(), z.null()])),
    })
    expect(outputProblems(schema)).toEqual([])
  })

  it.each([
    [{ type: 'strin' }, '/type: must be one of string, number, integer, boolean, object'],
    [{ type: [] }, '/type: must be one of'],
    [{ type: ['string', 'string'] }, '/type: must be one of'],
    [{ properties: [] }, '/properties: must be an object of schemas'],
    [{ properties: { a: 'string' } }, '/properties/a: must be a schema (an object or a boolean)'],
    [{ properties: { a: { type: 7 } } }, '/properties/a/type: must be one of'],
    [{ additionalProperties: 'no' }, '/additionalProperties: must be a schema'],
    [{ items: [{ type: 'string' }] }, '/items: must be a schema'],
    [{ prefixItems: {} }, '/prefixItems: must be an array of schemas'],
    [{ prefixItems: [3] }, '/prefixItems/0: must be a schema'],
    [{ required: 'a' }, '/required: must be an array of strings without repeats'],
    [{ required: ['a', 'a'] }, '/required: must be an array of strings without repeats'],
    [{ enum: [] }, '/enum: must be a non-empty array'],
    [{ anyOf: [] }, '/anyOf: must be a non-empty array of schemas'],
    [{ oneOf: [{ type: 'nope' }] }, '/oneOf/0/type: must be one of'],
    [{ allOf: {} }, '/allOf: must be a non-empty array of schemas'],
    [{ not: 1 }, '/not: must be a schema'],
    [{ $defs: { a: [] } }, '/$defs/a: must be a schema'],
    [{ definitions: 1 }, '/definitions: must be an object of schemas'],
    [{ minimum: '1' }, '/minimum: must be a number'],
    [{ exclusiveMaximum: true }, '/exclusiveMaximum: must be a number'],
    [{ multipleOf: 0 }, '/multipleOf: must be a number above 0'],
    [{ minLength: -1 }, '/minLength: must be an integer of 0 or more'],
    [{ maxItems: 1.5 }, '/maxItems: must be an integer of 0 or more'],
    [{ uniqueItems: 'yes' }, '/uniqueItems: must be true or false'],
    [{ description: 2 }, '/description: must be a string'],
    [{ pattern: 5 }, '/pattern: must be a string'],
    [{ $ref: 'https://example.com/s.json' }, '/$ref: must be a string starting with #'],
    [{ pattern: '([' }, '/pattern: not a valid regular expression'],
    [
      { patternProperties: { '([': true } },
      '/patternProperties/([: not a valid regular expression',
    ],
    [{ default: { pattern: '([' } }, '/default/pattern: not a valid regular expression'],
    [{ properties: { pattern: '([' } }, '/properties/pattern: must be a schema'],
  ])('%j: %s', (schema, problem) => {
    const problems = outputProblems(schema)
    expect(problems).toHaveLength(1)
    expect(problems[0]).toContain(`output: ${problem}`)
  })

  it('takes keywords it does not know even where they share a name with built-in properties', () => {
    const schema = JSON.parse(
      '{"type":"object","toString":1,"constructor":"x","__proto__":[],"properties":{"constructor":{"type":"string"},"hasOwnProperty":true}}',
    )
    expect(outputProblems(schema)).toEqual([])
  })

  it('names the problems of one schema in its own order', () => {
    const [problem] = outputProblems({ minimum: 'a', maximum: 'b', items: { minLength: -1 } })
    expect(problem).toBe(
      'output: /minimum: must be a number; /maximum: must be a number; ' +
        '/items/minLength: must be an integer of 0 or more',
    )
  })

  it('names every problem at once, the first eight and how many more', () => {
    const properties = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [`p${i}`, { minLength: -i - 1 }]),
    )
    const [problem] = outputProblems({ type: 'object', properties })
    const parts = problem!.replace(/^output: /, '').split('; ')
    expect(parts).toHaveLength(9)
    expect(parts[0]).toBe('/properties/p0/minLength: must be an integer of 0 or more')
    expect(parts[7]).toBe('/properties/p7/minLength: must be an integer of 0 or more')
    expect(parts[8]).toBe('(2 more)')
  })
})
