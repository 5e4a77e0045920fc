import { safeParse } from 'zod/v4/core'
import { describeIssues } from '../validation/describe-issues'
import { outputProblems } from '../validation/output-schema'
import { tooDeep } from '../validation/json-walk'
import type { Outcome } from './outcome'
import type { PersonAsk } from './state'
import type { Tool } from './tool'

/**
 * What a person sends with a decision, checked before it is recorded: arguments edited before
 * approval (docs/human-in-the-loop.md#edit-then-approve) and a question's answer.
 */

/** Why edited arguments were refused: every problem, and the fields they are in. */
export interface ArgsRefusal {
  code: 'not_editable' | 'invalid_args'
  message: string
  problems: string[]
  fields: string[]
}

/**
 * Edited arguments checked strictly against the tool: its schema, and no argument the tool's
 * JSON Schema does not name (a schema that strips unknown keys would otherwise drop them
 * silently, and the approver would approve what they did not send).
 */
export function checkEditedArgs(
  tool: Tool,
  jsonSchema: Record<string, unknown>,
  args: Record<string, unknown>,
): Outcome<{ args: Record<string, unknown> }, ArgsRefusal> {
  if (tool.editable === false) {
    const message = `${tool.name} does not take edited arguments (editable: false); approve or deny the call as it is`
    return { ok: false, code: 'not_editable', message, problems: [], fields: [] }
  }
  if (tooDeep(args)) return refused('the edited arguments nest too deep', ['(arguments)'], [])
  const problems: string[] = []
  const fields: string[] = []
  const parsed = safeParse(tool.params, args)
  if (!parsed.success) {
    problems.push(...describeIssues(parsed.error.issues, args))
    for (const issue of parsed.error.issues) {
      const at = issue.path.map(String)
      if (issue.code === 'unrecognized_keys') {
        fields.push(...issue.keys.map((k) => [...at, k].join('.')))
      } else fields.push(at.length ? at.join('.') : '(arguments)')
    }
  }
  // Arguments the JSON Schema does not name, which a schema that strips them let through.
  const known = jsonSchema.properties
  if (known && typeof known === 'object') {
    for (const k of Object.keys(args)) {
      if (k in known || fields.includes(k)) continue
      problems.push(`${k}: unknown argument`)
      fields.push(k)
    }
  }
  if (!problems.length) return { ok: true, args }
  return refused(`invalid arguments for ${tool.name}: ${problems.join('; ')}`, problems, fields)
}

function refused(message: string, problems: string[], fields: string[]) {
  const code = 'invalid_args' as const
  return { ok: false as const, code, message, problems, fields: [...new Set(fields)] }
}

/** Each way `answer` fails the question (its choices, its schema); empty: a valid answer. */
export function answerProblems(ask: PersonAsk | null, answer: unknown): string[] {
  if (answer === undefined || answer === null) return ['answer: missing']
  if (tooDeep(answer)) return ['answer: nests too deep']
  if (ask?.choices?.length && !ask.choices.includes(answer as string)) {
    return [`answer: must be one of ${ask.choices.map((c) => JSON.stringify(c)).join(', ')}`]
  }
  if (ask?.schema) return outputProblems(ask.schema, answer)
  if (!ask?.choices?.length && typeof answer !== 'string') {
    return ['answer: must be a string (the question has no schema)']
  }
  return []
}
