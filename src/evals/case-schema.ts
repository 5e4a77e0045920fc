import * as z from 'zod/mini'
import type { EvalDefinition } from '../../agents/define-eval'
import { describeIssues } from '../validation/describe-issues'
import { EvalFileError } from './eval-file-error'

const text = z.string().check(z.minLength(1))
const toolCall = z.union([
  text,
  z.strictObject({ name: text, args: z.optional(z.record(z.string(), z.unknown())) }),
])
const pattern = z.union([text, z.instanceof(RegExp)])
const count = z.number().check(z.int(), z.positive())

const ExpectationsSchema = z.strictObject({
  ok: z.optional(z.boolean()),
  stopReason: z.optional(text),
  output: z.optional(z.unknown()),
  outputMatches: z.optional(z.record(z.string(), z.unknown())),
  outputSchema: z.optional(
    z.custom<object>(
      (v) => typeof v === 'object' && v !== null,
      'must be a zod schema or a JSON Schema object',
    ),
  ),
  toolsCalled: z.optional(z.array(toolCall)),
  toolOrder: z.optional(z.array(toolCall)),
  toolsNotCalled: z.optional(z.array(text)),
  answerContains: z.optional(z.array(text)),
  answerMatches: z.optional(z.array(pattern)),
  maxSteps: z.optional(count),
  maxTokens: z.optional(count),
  maxCostUsd: z.optional(z.number().check(z.positive())),
  judge: z.optional(
    z.strictObject({ rubric: text, model: z.optional(text), instructions: z.optional(text) }),
  ),
})

const HttpFakeSchema = z.strictObject({
  method: z.optional(z.string().check(z.regex(/^[A-Z]+$/, 'must be an upper-case HTTP method'))),
  url: z.string().check(z.regex(/^https?:\/\//, 'must be an absolute http(s) URL')),
  status: z.optional(z.number().check(z.int(), z.gte(100), z.lte(599))),
  body: z.optional(z.unknown()),
  headers: z.optional(z.record(z.string(), z.string())),
})

const CaseSchema = z.strictObject({
  name: z.string().check(z.regex(/^[\w.:-]{1,80}$/, 'must be 1-80 letters, digits, _ . : or -')),
  task: text,
  followUps: z.optional(z.array(text)),
  metadata: z.optional(z.record(z.string(), z.string())),
  model: z.optional(text),
  tools: z.optional(z.array(text)),
  budget: z.optional(
    z.strictObject({
      maxSteps: z.optional(count),
      maxPromptTokens: z.optional(count),
      maxCostUsd: z.optional(z.number().check(z.positive())),
    }),
  ),
  approvals: z.optional(z.record(z.string(), z.enum(['approve', 'deny']))),
  fakes: z.optional(z.array(HttpFakeSchema)),
  expect: ExpectationsSchema,
  recording: z.optional(z.unknown()),
})

export const EvalFileSchema = z.strictObject({
  agent: text,
  model: z.optional(text),
  cases: z.array(CaseSchema).check(z.minLength(1)),
})

export type EvalFile = EvalDefinition & { file: string }

/**
 * An eval file's default export, checked: throws EvalFileError naming the file and each bad
 * field (`cases.1.expect.toolsCalled.0.name: missing (expected string)`), or a name used twice.
 */
export function parseEvalFile(file: string, value: unknown): EvalFile {
  const parsed = z.safeParse(EvalFileSchema, value)
  if (!parsed.success) {
    throw new EvalFileError(file, describeIssues(parsed.error.issues, value))
  }
  const seen = new Set<string>()
  for (const [i, c] of parsed.data.cases.entries()) {
    if (seen.has(c.name))
      throw new EvalFileError(file, [`cases.${i}.name: "${c.name}" is used twice`])
    seen.add(c.name)
  }
  return { ...(value as EvalDefinition), file }
}
