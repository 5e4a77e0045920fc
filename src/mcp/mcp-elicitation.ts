/**
 * Questions an MCP server asks during a call (`elicitation/create`, docs/mcp.md#questions-from-servers):
 * what edgeloop declares it can answer, the question as a person is shown it, and the check of a
 * person's answer (the requested schema's defaults applied first, SEP-1034). Who is asked, and
 * how long the request is held, is the caller's: an `McpAsker` given to the sessions.
 */
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js'
import { outputProblems } from '../validation/output-schema'
import { tooDeep } from '../validation/json-walk'

/** Form mode, and URL mode (the 2025-11-25 revision's): declared only when someone answers. */
export const ELICITATION_CAPABILITY = { form: {}, url: {} } as const

/** A server's question, as a person is shown it. */
export type McpQuestion =
  | {
      server: string
      mode: 'form'
      message: string
      /** The requested schema: a flat object of strings, numbers, booleans and enums. */
      schema: Record<string, unknown>
    }
  | {
      server: string
      mode: 'url'
      message: string
      /** Where the person goes (the server's own page); nothing they type passes through us. */
      url: string
      elicitationId: string
    }

/** A person's answer, as the API takes it and the server receives it. */
export interface McpAnswer {
  action: 'accept' | 'decline' | 'cancel'
  content?: Record<string, unknown>
}

/**
 * Asks a person `question` and resolves with their answer; `signal` aborts when the call that
 * led to the question ends (the answer is then no longer awaited).
 */
export type McpAsker = (question: McpQuestion, signal: AbortSignal) => Promise<McpAnswer>

/** The question in a server's `elicitation/create` request. */
export function questionOf(server: string, params: ElicitRequest['params']): McpQuestion {
  if (params.mode === 'url') {
    const { message, url, elicitationId } = params
    return { server, mode: 'url', message, url, elicitationId }
  }
  return { server, mode: 'form', message: params.message, schema: params.requestedSchema }
}

/**
 * A person's answer checked against the question: `accept` of a form gets the schema's defaults
 * for every field it leaves out, then must match the schema; `accept` of a URL question and
 * `decline`/`cancel` carry no content. Returns the answer to send, or what is wrong with it.
 */
export function checkAnswer(
  question: McpQuestion,
  answer: McpAnswer,
): { ok: true; answer: ElicitResult } | { ok: false; problems: string[] } {
  if (answer.action !== 'accept') return { ok: true, answer: { action: answer.action } }
  if (question.mode === 'url') {
    if (answer.content !== undefined) {
      return { ok: false, problems: ['content: a URL question takes no content'] }
    }
    return { ok: true, answer: { action: 'accept' } }
  }
  const content = withDefaults(question.schema, answer.content ?? {})
  const problems = outputProblems(question.schema, content).map((p) =>
    p.replace(/^answer/, 'content'),
  )
  if (problems.length) return { ok: false, problems }
  return { ok: true, answer: { action: 'accept', content: content as ElicitResult['content'] } }
}

/** `content` with the default of every property of `schema` that it leaves out (SEP-1034). */
export function withDefaults(
  schema: Record<string, unknown>,
  content: Record<string, unknown>,
): Record<string, unknown> {
  const properties = schema.properties
  if (!properties || typeof properties !== 'object') return content
  const filled = { ...content }
  for (const [key, property] of Object.entries(properties as Record<string, unknown>)) {
    if (filled[key] !== undefined || !property || typeof property !== 'object') continue
    if ('default' in property) filled[key] = (property as { default: unknown }).default
  }
  return filled
}

/**
 * What is wrong with a person's answer to a server's form, as a run's question item takes it
 * (the content alone): the schema's defaults are applied first, as they are when it is sent.
 * Empty: the answer is good.
 */
export function formAnswerProblems(schema: Record<string, unknown>, answer: unknown): string[] {
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) {
    return ["answer: must be an object of the form's fields"]
  }
  if (tooDeep(answer)) return ['answer: nests too deep']
  return outputProblems(schema, withDefaults(schema, answer as Record<string, unknown>))
}
