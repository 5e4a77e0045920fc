import * as z from 'zod/mini'
import { canonicalJson } from '../src/kernel/canonical'
import { defineTool } from '../src/kernel/tool'
import { outputSchemaProblems } from '../src/validation/output-schema'

/**
 * Lets the agent ask a person instead of guessing (docs/human-in-the-loop.md#questions): the call
 * waits on a `question` item, bound to the question, its choices and its schema, which a person
 * answers through the API, the console or Slack. The answer (checked against the choices or the
 * schema) is the observation; a decline or the item's expiry becomes an observation that says so.
 * An agent opts in by naming `ask_person` among its tools.
 */
export const askPerson = defineTool({
  name: 'ask_person',
  description:
    'Ask a person a question and wait for the answer, instead of guessing: when the task is ' +
    'ambiguous, a value is missing, or a choice is theirs to make. Give choices when the answer ' +
    'is one of a few options; give a JSON Schema when you need a structured answer. The run ' +
    'waits (possibly for hours) until someone answers, declines or the question expires.',
  params: z.object({
    question: z
      .string()
      .check(
        z.minLength(1),
        z.maxLength(2000),
        z.describe('The question, complete on its own: the person sees only this.'),
      ),
    choices: z.optional(
      z
        .array(z.string().check(z.minLength(1), z.maxLength(200)))
        .check(
          z.minLength(2),
          z.maxLength(10),
          z.describe('The answers to choose from (2 to 10); the answer is one of them.'),
        ),
    ),
    schema: z.optional(
      z
        .record(z.string(), z.unknown())
        .check(z.describe('A JSON Schema the answer must match, for a structured answer.')),
    ),
  }),
  returns: 'The answer and who gave it, or that nobody answered.',
  check: ({ choices, schema }) => {
    if (choices && schema) return 'give choices or a schema, not both'
    if (choices && new Set(choices).size !== choices.length) return 'the choices repeat'
    if (schema) {
      const problems = outputSchemaProblems(schema)
      if (problems.length) return `the schema is not usable: ${problems.join('; ')}`
    }
    return undefined
  },
  person: ({ question, choices, schema }) => ({
    kind: 'question',
    message: question,
    ...(choices ? { choices } : {}),
    ...(schema ? { schema } : {}),
  }),
  handler: (_args, ctx) => {
    const answered = ctx.person
    if (!answered) return '[ToolError] ask_person ran without an answer; ask again.'
    const text =
      typeof answered.answer === 'string' ? answered.answer : canonicalJson(answered.answer)
    return `${answered.by} answered: ${text}`
  },
})
