/**
 * A small client for the Slack Web API methods edgeloop uses. fetch is called late (the
 * outbound fake replaces it in tests); rate limits and server errors are retried with a bound.
 */
import { createRedactor, type Redactor } from '../security/redactor'
import * as z from 'zod/mini'
import { SlackApiError } from './slack-api-error'

export interface SlackClientOptions {
  /** Bot token (`xoxb-…`). Sent only in the Authorization header, never in errors. */
  token: string
  baseUrl?: string
  fetch?: (input: string, init: RequestInit) => Promise<Response>
  sleep?: (ms: number) => Promise<void>
  /** Retries after the first attempt, for 429, 5xx and network errors. */
  maxRetries?: number
  /** Longest `Retry-After` we wait out; above it we give up with a retryable error. */
  maxRetryAfterSeconds?: number
  /** Longest one attempt may take; a slower one counts as a network error. Default: no limit. */
  timeoutMs?: number
}

export interface PostMessageInput {
  channel: string
  text: string
  blocks?: unknown[]
  thread_ts?: string
}

export interface UpdateInput {
  channel: string
  ts: string
  text: string
  blocks?: unknown[]
}

export interface PostEphemeralInput {
  channel: string
  user: string
  text: string
  thread_ts?: string
}

export interface StartStreamInput {
  channel: string
  thread_ts: string
  markdown_text?: string
  /** Required by Slack when streaming to a channel (not a DM). */
  recipient_team_id?: string
  recipient_user_id?: string
}

export interface AppendStreamInput {
  channel: string
  ts: string
  markdown_text: string
}

export interface StopStreamInput {
  channel: string
  ts: string
  markdown_text?: string
}

export interface SetStatusInput {
  channel_id: string
  thread_ts: string
  /** What the app is doing ("is thinking…"); empty clears it. */
  status: string
}

export interface OpenViewInput {
  /** From the interaction that opens it; Slack takes it once, within 3 seconds. */
  trigger_id: string
  view: Record<string, unknown>
}

export interface PublishViewInput {
  /** Whose Home tab shows it. */
  user_id: string
  view: Record<string, unknown>
}

const ViewResult = z.looseObject({
  ok: z.literal(true),
  view: z.looseObject({ id: z.string(), hash: z.optional(z.string()) }),
})
const PostMessageResult = z.looseObject({
  ok: z.literal(true),
  channel: z.string(),
  ts: z.string(),
})
const UpdateResult = z.looseObject({ ok: z.literal(true), channel: z.string(), ts: z.string() })
const PostEphemeralResult = z.looseObject({ ok: z.literal(true), message_ts: z.string() })
const StreamResult = z.looseObject({ ok: z.literal(true), channel: z.string(), ts: z.string() })
const OkResult = z.looseObject({ ok: z.literal(true) })
const SlackReply = z.looseObject({ ok: z.boolean(), error: z.optional(z.string()) })

// Slack codes that describe Slack's state, not our request: worth trying again later.
const TRANSIENT_CODES = new Set([
  'ratelimited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
])

const BACKOFF_BASE_MS = 500
const BACKOFF_MAX_MS = 8_000

export class SlackClient {
  readonly #token: string
  #redactor: Redactor | undefined
  readonly #baseUrl: string
  readonly #fetch: (input: string, init: RequestInit) => Promise<Response>
  readonly #sleep: (ms: number) => Promise<void>
  readonly #maxRetries: number
  readonly #maxRetryAfterSeconds: number
  readonly #timeoutMs: number | undefined

  constructor(options: SlackClientOptions) {
    if (!options.token) {
      throw new TypeError('SlackClient requires a bot token: set SLACK_BOT_TOKEN')
    }
    this.#token = options.token
    this.#baseUrl = (options.baseUrl ?? 'https://slack.com/api').replace(/\/+$/, '')
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init))
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)))
    this.#maxRetries = options.maxRetries ?? 2
    this.#maxRetryAfterSeconds = options.maxRetryAfterSeconds ?? 30
    this.#timeoutMs = options.timeoutMs
  }

  /** `chat.postMessage`: post to a channel (or a thread with `thread_ts`). */
  async postMessage(input: PostMessageInput): Promise<z.infer<typeof PostMessageResult>> {
    return this.#call('chat.postMessage', input, PostMessageResult)
  }

  /** `chat.update`: replace a message the bot posted earlier. */
  async update(input: UpdateInput): Promise<z.infer<typeof UpdateResult>> {
    return this.#call('chat.update', input, UpdateResult)
  }

  /** `chat.postEphemeral`: a message only `user` sees. */
  async postEphemeral(input: PostEphemeralInput): Promise<z.infer<typeof PostEphemeralResult>> {
    return this.#call('chat.postEphemeral', input, PostEphemeralResult)
  }

  /** `chat.startStream`: a message in a thread whose text is then appended to. */
  async startStream(input: StartStreamInput): Promise<z.infer<typeof StreamResult>> {
    return this.#call('chat.startStream', input, StreamResult)
  }

  /** `chat.appendStream`: more text for a streaming message. */
  async appendStream(input: AppendStreamInput): Promise<z.infer<typeof OkResult>> {
    return this.#call('chat.appendStream', input, OkResult)
  }

  /** `chat.stopStream`: the streaming message is finished (with its last text, if any). */
  async stopStream(input: StopStreamInput): Promise<z.infer<typeof OkResult>> {
    return this.#call('chat.stopStream', input, OkResult)
  }

  /** `assistant.threads.setStatus`: what an assistant app is doing in a thread. */
  async setStatus(input: SetStatusInput): Promise<z.infer<typeof OkResult>> {
    return this.#call('assistant.threads.setStatus', input, OkResult)
  }

  /** `views.open`: a modal, in answer to a person's click. */
  async openView(input: OpenViewInput): Promise<z.infer<typeof ViewResult>> {
    return this.#call('views.open', input, ViewResult)
  }

  /** `views.publish`: the app's Home tab as one person sees it. */
  async publishView(input: PublishViewInput): Promise<z.infer<typeof ViewResult>> {
    return this.#call('views.publish', input, ViewResult)
  }

  async #call<S extends z.ZodMiniType>(
    method: string,
    body: object,
    schema: S,
  ): Promise<z.infer<S>> {
    const url = `${this.#baseUrl}/${method}`
    for (let attempt = 0; ; attempt++) {
      const retriesLeft = attempt < this.#maxRetries
      let res: Response
      try {
        res = await this.#fetch(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${this.#token}`,
            'content-type': 'application/json; charset=utf-8',
          },
          body: JSON.stringify(body),
          ...(this.#timeoutMs ? { signal: AbortSignal.timeout(this.#timeoutMs) } : {}),
        })
      } catch (err) {
        if (retriesLeft) {
          await this.#sleep(backoffMs(attempt))
          continue
        }
        // No `cause`: the message is redacted, and the original error must not carry the token on.
        throw this.#error(method, 'network', true, {
          detail: `network error: ${this.#redact(err instanceof Error ? err.message : String(err))}`,
        })
      }

      if (res.status === 429) {
        const retryAfter = parseRetryAfter(res.headers.get('retry-after'))
        await res.body?.cancel()
        if (retriesLeft && retryAfter !== undefined && retryAfter <= this.#maxRetryAfterSeconds) {
          await this.#sleep(retryAfter * 1000)
          continue
        }
        throw this.#error(method, 'ratelimited', true, {
          status: 429,
          retryAfterSeconds: retryAfter,
          detail:
            retryAfter === undefined
              ? 'rate limited without a usable Retry-After'
              : `rate limited; Slack asked for ${retryAfter} s`,
        })
      }
      if (res.status >= 500) {
        await res.body?.cancel()
        if (retriesLeft) {
          await this.#sleep(backoffMs(attempt))
          continue
        }
        throw this.#error(method, `http_${res.status}`, true, { status: res.status })
      }
      if (!res.ok) {
        await res.body?.cancel()
        throw this.#error(method, `http_${res.status}`, false, { status: res.status })
      }

      let json: unknown
      try {
        json = await res.json()
      } catch {
        throw this.#error(method, 'bad_response', false, { detail: 'response is not JSON' })
      }
      const reply = SlackReply.safeParse(json)
      if (!reply.success) {
        throw this.#error(method, 'bad_response', false, { detail: 'response has no "ok" field' })
      }
      if (!reply.data.ok) {
        const code = reply.data.error ?? 'unknown_error'
        throw this.#error(method, code, TRANSIENT_CODES.has(code), {})
      }
      const result = schema.safeParse(json)
      if (!result.success) {
        throw this.#error(method, 'bad_response', false, {
          detail: 'response lacks expected fields',
        })
      }
      return result.data as z.infer<S>
    }
  }

  #error(
    method: string,
    code: string,
    retryable: boolean,
    extra: { status?: number; retryAfterSeconds?: number; detail?: string },
  ): SlackApiError {
    const what = extra.detail ?? code
    const next = retryable ? 'try again later' : hint(code)
    return new SlackApiError(`Slack ${method} failed: ${what} (${next})`, {
      method,
      code,
      retryable,
      status: extra.status,
      retryAfterSeconds: extra.retryAfterSeconds,
    })
  }

  #redact(text: string): string {
    this.#redactor ??= createRedactor([this.#token])
    return this.#redactor(text)
  }
}

function hint(code: string): string {
  switch (code) {
    case 'invalid_auth':
    case 'not_authed':
    case 'token_revoked':
    case 'account_inactive':
      return 'check SLACK_BOT_TOKEN'
    case 'channel_not_found':
    case 'not_in_channel':
      return 'invite the bot to the channel'
    case 'missing_scope':
      return 'add the scope in the Slack app settings and reinstall'
    default:
      return 'not retryable'
  }
}

function parseRetryAfter(header: string | null): number | undefined {
  if (header === null || !/^\d+$/.test(header.trim())) return undefined
  return Number(header.trim())
}

function backoffMs(attempt: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** attempt, BACKOFF_MAX_MS)
}
