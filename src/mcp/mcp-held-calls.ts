/**
 * Calls whose server asked a person a question, held open while a person answers
 * (docs/mcp.md#questions-from-servers, docs/decisions.md). A run's object cannot keep one
 * handler waiting for hours: the call's handler returns at once with the question as a pending
 * item, and the request itself stays open here, in the object's memory, with the server's
 * question unanswered. When the item is answered the call's handler runs again, takes the held
 * request, sends the answer and waits for the result. Nothing here is stored: an object that
 * dies loses what it held, and the handler finds nothing to take (mcp-question-call.ts says
 * what happens then).
 */
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js'
import type { McpAnswer, McpAsker, McpQuestion } from './mcp-elicitation'

/** One call in flight whose server may ask: how its question reaches the call's handler. */
export interface WatchedCall {
  /** `<run id>:<call id>`: the call's idempotency key. */
  key: string
  /** Receives the server's question; resolves with the answer to send. */
  onQuestion: (question: McpQuestion) => Promise<McpAnswer>
}

/** A call held open on a server's unanswered question. */
export interface HeldCall {
  server: string
  question: McpQuestion
  /** Sends the answer to the server's question (once; later ones are ignored). */
  reply: (answer: McpAnswer) => void
  /** The call's own result (mcp-client.ts's McpCallResult), when the server gives it. */
  result: Promise<unknown>
  /** Gives up the call's request (its signal). */
  abandon: (why: Error) => void
  /** The server's `timeout_ms`: how long a released call's last answer is waited for. */
  timeoutMs: number
}

export class HeldMcpCalls {
  readonly #watching = new Map<string, Set<WatchedCall>>()
  readonly #held = new Map<string, HeldCall>()

  /**
   * The sessions' asker: a server's question goes to the one call in flight on that server. With
   * none, or several (which of them asked cannot be told apart on the wire), it is answered
   * `cancel`.
   */
  readonly ask: McpAsker = (question) => {
    const calls = this.#watching.get(question.server)
    if (calls?.size !== 1) return Promise.resolve({ action: 'cancel' })
    return [...calls][0]!.onQuestion(question)
  }

  /** Routes `server`'s questions to `call` until the returned function is called. */
  watch(server: string, call: WatchedCall): () => void {
    let calls = this.#watching.get(server)
    if (!calls) this.#watching.set(server, (calls = new Set()))
    calls.add(call)
    return () => {
      calls.delete(call)
      if (!calls.size && this.#watching.get(server) === calls) this.#watching.delete(server)
    }
  }

  /** Holds `call` under `key` until its handler takes it (or it is released). */
  hold(key: string, call: HeldCall): void {
    // A result that comes while nobody waits is kept in the promise; its failure too.
    call.result.catch(() => {})
    this.#held.set(key, call)
  }

  /** The held call of `key`, no longer held (undefined: none, e.g. the object restarted). */
  take(key: string): HeldCall | undefined {
    const call = this.#held.get(key)
    this.#held.delete(key)
    return call
  }

  /** The keys of the calls held now. */
  keys(): string[] {
    return [...this.#held.keys()]
  }

  /** Whether a call on `server` is held (its session must outlive the slice). */
  holds(server: string): boolean {
    for (const call of this.#held.values()) if (call.server === server) return true
    return false
  }

  /**
   * Answers a held call's question with `answer` (a decline, or `cancel` when nobody answered)
   * and lets the call go. What the server answers then is not used, but it is waited for (at
   * most the server's timeout) so the answer is out before the session ends.
   */
  async release(key: string, answer: ElicitResult & McpAnswer): Promise<void> {
    const call = this.take(key)
    if (!call) return
    call.reply(answer)
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, call.timeoutMs)))
    try {
      await Promise.race([
        call.result.then(
          () => {},
          () => {},
        ),
        late,
      ])
    } finally {
      clearTimeout(timer)
    }
  }
}
