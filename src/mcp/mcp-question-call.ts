/**
 * A run's MCP tool call whose server may ask a person a question mid-call
 * (docs/mcp.md#questions-from-servers, docs/decisions.md). The question makes the call wait on a
 * `question` item: the handler returns `personNeeded(…)` at once while the request stays open in
 * the object's memory (mcp-held-calls.ts). Once a person answered, the handler runs again:
 *
 * - the request is still held: the answer goes to the server and the call goes on in it;
 * - it is not (the object restarted, or evicted): a read-only or idempotent call is sent again
 *   and the server's question, asked again, is answered at once with the stored answer; a side
 *   effect is never sent again: its observation says its outcome is unknown.
 */
import { personNeeded, type PersonNeeded } from '../kernel/pending-items'
import type { ToolContext } from '../kernel/tool'
import { callMcpTool, type McpCallResult } from './mcp-client'
import { checkAnswer, type McpAnswer, type McpQuestion } from './mcp-elicitation'
import type { HeldCall, HeldMcpCalls, WatchedCall } from './mcp-held-calls'
import type { McpServerConfig } from './mcp-servers'
import type { McpSessions } from './mcp-sessions'

/**
 * The SDK's limit for a call that may be held on a question: a day, the default expiry of a
 * pending item. Each handler's own wait is bounded by its timeout (its signal) as always.
 */
export const HELD_CALL_LIMIT_MS = 24 * 60 * 60 * 1000

/** What a URL question's answer is: the person says they finished on the server's page. */
export const URL_DONE = 'done'

export interface AskingCall {
  /** The server's own name of the tool. */
  name: string
  args: Record<string, unknown>
  sideEffect: boolean
  idempotent: boolean
}

/**
 * Calls `call` in `sessions`, whose questions `hold` keeps: what the server answered, or what the
 * handler returns instead (the question item, or why a lost side effect was not sent again).
 */
export async function callAskingPerson(
  server: McpServerConfig,
  call: AskingCall,
  ctx: ToolContext,
  sessions: McpSessions,
  hold: HeldMcpCalls,
): Promise<{ called: McpCallResult } | { instead: PersonNeeded | string }> {
  const key = ctx.idempotencyKey
  const answered = ctx.person?.kind === 'question' ? ctx.person : null
  const watch = new QuestionWatch(key)
  const unwatch = hold.watch(server.name, watch)
  const held = answered ? hold.take(key) : undefined
  let running: Pick<HeldCall, 'result' | 'abandon'>
  const onAbort = () => running.abandon(ctx.signal.reason as Error)
  try {
    if (held) {
      running = held
      held.reply(answerFor(held.question, answered!.answer))
    } else {
      if (answered && call.sideEffect && !call.idempotent) {
        return { instead: lostSideEffect(server, call, ctx) }
      }
      // Sent again after a restart: the question it asks again is answered at once.
      if (answered) watch.preset = answered.answer
      const controller = new AbortController()
      const result = callMcpTool(
        server,
        { ...call, idempotencyKey: key, sdkTimeoutMs: HELD_CALL_LIMIT_MS },
        controller.signal,
        sessions,
      )
      running = { result, abandon: (why) => controller.abort(why) }
    }
    if (ctx.signal.aborted) onAbort()
    ctx.signal.addEventListener('abort', onAbort, { once: true })
    const done = running.result.then((result) => ({ result }))
    // Should the question come first, a later failure is the held call's (mcp-held-calls.ts).
    done.catch(() => {})
    const first = await Promise.race([done, watch.asked.then((asked) => ({ asked }))])
    if ('result' in first) return { called: first.result as McpCallResult }
    const { question, reply } = first.asked
    const { result, abandon } = running
    hold.hold(key, {
      server: server.name,
      question,
      reply,
      result,
      abandon,
      timeoutMs: server.timeoutMs,
    })
    return { instead: personNeeded(questionItem(question)) }
  } finally {
    unwatch()
    ctx.signal.removeEventListener('abort', onAbort)
  }
}

/** Routes the server's question to the handler that is running the call. */
class QuestionWatch implements WatchedCall {
  /** A stored answer for the question a call sent again asks (used once). */
  preset: unknown = undefined
  readonly asked: Promise<{ question: McpQuestion; reply: (answer: McpAnswer) => void }>
  #onAsked!: (asked: { question: McpQuestion; reply: (answer: McpAnswer) => void }) => void

  constructor(readonly key: string) {
    this.asked = new Promise((resolve) => (this.#onAsked = resolve))
  }

  onQuestion = (question: McpQuestion): Promise<McpAnswer> => {
    if (this.preset !== undefined) {
      const answer = answerFor(question, this.preset)
      this.preset = undefined
      // The stored answer fits the question asked again: it goes at once, else a person is asked.
      if (checkAnswer(question, answer).ok) return Promise.resolve(answer)
    }
    return new Promise((reply) => this.#onAsked({ question, reply }))
  }
}

/** A person's stored answer (a form's content, or URL_DONE) as the server is sent it. */
function answerFor(question: McpQuestion, answer: unknown): McpAnswer {
  if (question.mode === 'url') return { action: 'accept' }
  const content = answer && typeof answer === 'object' ? (answer as Record<string, unknown>) : {}
  return { action: 'accept', content }
}

/** The `question` item a server's question becomes: a form (its schema), or a page to open. */
export function questionItem(question: McpQuestion) {
  const { server } = question
  if (question.mode === 'url') {
    return {
      kind: 'question' as const,
      message: `The ${server} MCP server asks you to open ${question.url}: ${question.message}. Answer "${URL_DONE}" once you have finished there.`,
      choices: [URL_DONE],
      details: {
        mcp: { server, mode: 'url', url: question.url, elicitationId: question.elicitationId },
      },
    }
  }
  return {
    kind: 'question' as const,
    message: `The ${server} MCP server asks: ${question.message}`,
    schema: question.schema,
    details: { mcp: { server, mode: 'form' } },
  }
}

/**
 * A side effect whose request was lost while its question waited: it may have taken effect
 * (the server acted before it asked, or after), so it is not sent again.
 */
function lostSideEffect(server: McpServerConfig, call: AskingCall, ctx: ToolContext): string {
  return (
    `[ToolError] outcome unknown: the ${server.name} MCP server asked a question during ` +
    `${call.name} (call ${ctx.callId}), and the call's request was lost before the answer came ` +
    '(the run was moved or restarted while it waited). It may have taken effect, so it was not ' +
    'sent again; check its effect before retrying.'
  )
}
