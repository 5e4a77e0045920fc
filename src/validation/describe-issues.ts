import type * as zc from 'zod/v4/core'

/** One line per validation problem, naming the argument and what was wrong with it. */
export function describeIssues(issues: readonly zc.$ZodIssue[], input: unknown): string[] {
  return issues.map((issue) => {
    const path = issue.path.length ? issue.path.map(String).join('.') : '(arguments)'
    const value = valueAt(input, issue.path)
    switch (issue.code) {
      case 'invalid_type':
        return value === undefined
          ? `${path}: missing (expected ${issue.expected})`
          : `${path}: expected ${issue.expected}, got ${typeName(value)}`
      case 'too_big':
        return `${path}: must be ${issue.inclusive ? '<=' : '<'} ${String(issue.maximum)}${unit(issue.origin)}`
      case 'too_small':
        return `${path}: must be ${issue.inclusive ? '>=' : '>'} ${String(issue.minimum)}${unit(issue.origin)}`
      case 'invalid_value':
        return `${path}: must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`
      case 'unrecognized_keys':
        return `${path}: unknown argument${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`
      case 'invalid_format':
        // A pattern check is not "a regex" to the caller: its own message, else the pattern.
        if (issue.format === 'regex') {
          const own = issue.message && !issue.message.startsWith('Invalid')
          return `${path}: ${own ? issue.message : `does not match ${String(issue.pattern)}`}`
        }
        return `${path}: not a valid ${issue.format}`
      case 'not_multiple_of':
        return `${path}: must be a multiple of ${String(issue.divisor)}`
      default:
        return `${path}: ${issue.message}`
    }
  })
}

function unit(origin: string): string {
  if (origin === 'string') return ' characters'
  if (origin === 'array' || origin === 'set') return ' items'
  return ''
}

function typeName(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number' && Number.isNaN(value)) return 'NaN'
  return typeof value
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined
    current = (current as Record<PropertyKey, unknown>)[key]
  }
  return current
}
