/**
 * A strict fake of the Slack Web API (`chat.postMessage`, `chat.update`, `chat.postEphemeral`,
 * the streaming `chat.startStream` / `chat.appendStream` / `chat.stopStream`,
 * `assistant.threads.setStatus`, and `views.open` / `views.update` / `views.publish`) for `new Outbound().on('slack.test', fakeSlack.handler)`, plus builders for SIGNED inbound
 * Slack requests (slash commands, events, interactions) as Slack would send them.
 */
import type { FakeHandler } from './outbound'

export type SlackFailure =
  | { status: 429; retryAfter?: number }
  | { status: 500 | 502 | 503 }
  | { error: string }
  | { network: true }

export interface FakeSlackMessage {
  channel: string
  ts: string
  text?: string
  blocks?: unknown[]
  thread_ts?: string
  /** How many times `chat.update` replaced it. */
  updates: number
  /** A `chat.startStream` message: true until `chat.stopStream`. */
  streaming?: boolean
}

export interface FakeThreadStatus {
  channel_id: string
  thread_ts: string
  status: string
}

export interface FakeEphemeral {
  channel: string
  user: string
  text?: string
  thread_ts?: string
  message_ts: string
}

export interface FakeSlackCall {
  method: string
  /** `Date.now()` when the call arrived (a faked clock makes the gaps what the caller waited). */
  at: number
  body: Record<string, unknown> | undefined
  status: number
  response: unknown
}

type Json = Record<string, unknown>

const STREAM_METHODS = ['chat.startStream', 'chat.appendStream', 'chat.stopStream'] as const
const METHODS = [
  'chat.postMessage',
  'chat.update',
  'chat.postEphemeral',
  ...STREAM_METHODS,
  'assistant.threads.setStatus',
  'views.open',
  'views.update',
  'views.publish',
] as const
type Method = (typeof METHODS)[number]

/** A view Slack holds: a modal opened (and updated), or a person's Home tab. */
export interface FakeSlackView {
  id: string
  hash: string
  view: Json
  /** The user whose Home tab it is (`views.publish`). */
  user?: string
  /** The trigger_id a modal was opened with. */
  triggerId?: string
}

export class FakeSlack {
  readonly calls: FakeSlackCall[] = []
  readonly #token: string
  readonly #channels: Set<string> | undefined
  readonly #messages = new Map<string, FakeSlackMessage[]>()
  readonly #ephemerals: FakeEphemeral[] = []
  readonly #failures = new Map<string, SlackFailure[]>()
  /** Every `assistant.threads.setStatus` Slack accepted, in order. */
  readonly statuses: FakeThreadStatus[] = []
  /**
   * false: a workspace without the streaming API, which answers `unknown_method` to the
   * `chat.*Stream` methods (as Slack does for a method it does not have).
   */
  streamingAvailable = true
  /** Methods called that this fake does not speak: a test fails on any (harness restore). */
  readonly unknownMethods: string[] = []
  #nextTs = 1
  /** Modals opened (and updated) through `views.open` / `views.update`, oldest first. */
  readonly modals: FakeSlackView[] = []
  /** Each user's Home tab as last published. */
  readonly homes = new Map<string, FakeSlackView>()
  readonly #usedTriggers = new Set<string>()
  #nextView = 1

  /** `channels`, when given, are the only ones the bot is in; others get `channel_not_found`. */
  constructor(options: { token: string; channels?: string[] }) {
    this.#token = options.token
    this.#channels = options.channels ? new Set(options.channels) : undefined
  }

  /** Make the next call of `method` fail this way (queued: call again for more failures). */
  failNext(method: Method, failure: SlackFailure): this {
    const queue = this.#failures.get(method) ?? []
    queue.push(failure)
    this.#failures.set(method, queue)
    return this
  }

  /** Messages posted in `channel`, oldest first, as they read now (after updates). */
  messages(channel: string): FakeSlackMessage[] {
    return this.#messages.get(channel) ?? []
  }

  ephemerals(channel?: string): FakeEphemeral[] {
    return this.#ephemerals.filter((e) => channel === undefined || e.channel === channel)
  }

  /** Calls of one method that Slack answered `ok: true`. */
  succeeded(method: Method): FakeSlackCall[] {
    return this.calls.filter((c) => c.method === method && (c.response as Json)?.ok === true)
  }

  /** Successful `chat.update` calls of one message. */
  updatesOf(ts: string): FakeSlackCall[] {
    return this.succeeded('chat.update').filter((c) => c.body?.ts === ts)
  }

  readonly handler: FakeHandler = async (req) => {
    const match = /^\/api\/([A-Za-z.]+)$/.exec(new URL(req.url).pathname)
    const method = match?.[1] ?? ''
    const at = Date.now()
    let body: Json | undefined
    const reply = (status: number, response: unknown, headers: Record<string, string> = {}) => {
      this.calls.push({ method, at, body, status, response })
      return typeof response === 'string'
        ? new Response(response, { status, headers })
        : Response.json(response, { status, headers })
    }
    const streamMethod = (STREAM_METHODS as readonly string[]).includes(method)
    if (
      !(METHODS as readonly string[]).includes(method) ||
      (streamMethod && !this.streamingAvailable)
    ) {
      if (!streamMethod) this.unknownMethods.push(method)
      return reply(200, { ok: false, error: 'unknown_method' })
    }
    if (req.method !== 'POST') return reply(405, 'method not allowed')

    const failure = this.#failures.get(method)?.shift()
    if (failure) {
      if ('network' in failure) {
        this.calls.push({ method, at, body, status: 0, response: 'network error' })
        throw new TypeError('fake Slack: network connection lost')
      }
      if ('error' in failure) return reply(200, { ok: false, error: failure.error })
      if (failure.status === 429) {
        const headers: Record<string, string> =
          failure.retryAfter === undefined ? {} : { 'retry-after': String(failure.retryAfter) }
        return reply(429, { ok: false, error: 'ratelimited' }, headers)
      }
      return reply(failure.status, 'upstream error')
    }

    const auth = req.headers.get('authorization')
    if (!auth) return reply(200, { ok: false, error: 'not_authed' })
    if (auth !== `Bearer ${this.#token}`) return reply(200, { ok: false, error: 'invalid_auth' })

    const contentType = req.headers.get('content-type') ?? ''
    if (!contentType.startsWith('application/json')) {
      return reply(200, { ok: false, error: 'invalid_arguments' })
    }
    try {
      const parsed: unknown = JSON.parse(await req.text())
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
        throw new Error('not an object')
      body = parsed as Json
    } catch {
      return reply(200, { ok: false, error: 'invalid_json' })
    }
    // Slack answers but warns when the charset is missing from a JSON body.
    const warning = /charset=utf-8/i.test(contentType) ? {} : { warning: 'missing_charset' }

    if (method.startsWith('views.')) {
      const answer = this.#view(method as Method, body)
      return reply(200, { ...answer, ...(answer.ok ? warning : {}) })
    }
    const problem = this.#checkArguments(method as Method, body)
    if (problem) return reply(200, { ok: false, error: problem })
    const channel = (body.channel ?? body.channel_id) as string
    if (this.#channels && !this.#channels.has(channel)) {
      return reply(200, { ok: false, error: 'channel_not_found' })
    }

    switch (method as Method) {
      case 'chat.postMessage': {
        const message: FakeSlackMessage = {
          channel,
          ts: this.#ts(),
          text: body.text as string | undefined,
          blocks: body.blocks as unknown[] | undefined,
          thread_ts: body.thread_ts as string | undefined,
          updates: 0,
        }
        this.#messages.set(channel, [...this.messages(channel), message])
        const { updates: _updates, ...shown } = message
        return reply(200, {
          ok: true,
          channel,
          ts: message.ts,
          message: { type: 'message', user: 'UFAKEBOT', ...shown },
          ...warning,
        })
      }
      case 'chat.update': {
        const message = this.messages(channel).find((m) => m.ts === body.ts)
        if (!message) return reply(200, { ok: false, error: 'message_not_found' })
        message.text = body.text as string | undefined
        message.blocks = body.blocks as unknown[] | undefined
        message.updates++
        return reply(200, { ok: true, channel, ts: message.ts, text: message.text, ...warning })
      }
      case 'chat.postEphemeral': {
        const ephemeral: FakeEphemeral = {
          channel,
          user: body.user as string,
          text: body.text as string | undefined,
          thread_ts: body.thread_ts as string | undefined,
          message_ts: this.#ts(),
        }
        this.#ephemerals.push(ephemeral)
        return reply(200, { ok: true, message_ts: ephemeral.message_ts, ...warning })
      }
      case 'chat.startStream': {
        const message: FakeSlackMessage = {
          channel,
          ts: this.#ts(),
          text: (body.markdown_text as string | undefined) ?? '',
          thread_ts: body.thread_ts as string,
          updates: 0,
          streaming: true,
        }
        this.#messages.set(channel, [...this.messages(channel), message])
        return reply(200, { ok: true, channel, ts: message.ts, ...warning })
      }
      case 'chat.appendStream':
      case 'chat.stopStream': {
        const message = this.messages(channel).find((m) => m.ts === body.ts)
        if (!message) return reply(200, { ok: false, error: 'message_not_found' })
        if (!message.streaming)
          return reply(200, { ok: false, error: 'message_not_in_streaming_state' })
        message.text = (message.text ?? '') + ((body.markdown_text as string | undefined) ?? '')
        if (method === 'chat.stopStream') message.streaming = false
        return reply(200, { ok: true, channel, ts: message.ts, ...warning })
      }
      case 'assistant.threads.setStatus': {
        this.statuses.push({
          channel_id: channel,
          thread_ts: body.thread_ts as string,
          status: body.status as string,
        })
        return reply(200, { ok: true, ...warning })
      }
      default: // the views.* methods, answered above
        return reply(200, { ok: false, error: 'unknown_method' })
    }
  }

  /**
   * `views.open` (a trigger_id, used once), `views.update` (by view_id or external_id, with the
   * hash it last read, if any) and `views.publish` (a user's Home tab): the view is checked as
   * Slack checks it, and held.
   */
  #view(method: Method, body: Json): Json {
    const view = body.view
    if (!view || typeof view !== 'object' || Array.isArray(view))
      return { ok: false, error: 'invalid_arguments' }
    const problem = viewProblem(view as Json, method === 'views.publish' ? 'home' : 'modal')
    if (problem)
      return { ok: false, error: 'invalid_arguments', response_metadata: { messages: [problem] } }
    const held = (v: FakeSlackView) => ({ ok: true, view: { ...v.view, id: v.id, hash: v.hash } })
    if (method === 'views.open') {
      const trigger = body.trigger_id
      if (typeof trigger !== 'string' || !/^\d+\.\d+\.[0-9a-f]+$/.test(trigger))
        return { ok: false, error: 'invalid_trigger_id' }
      if (this.#usedTriggers.has(trigger)) return { ok: false, error: 'exchanged_trigger_id' }
      this.#usedTriggers.add(trigger)
      const opened = {
        id: this.#viewId(),
        hash: this.#viewHash(),
        view: view as Json,
        triggerId: trigger,
      }
      this.modals.push(opened)
      return held(opened)
    }
    if (method === 'views.update') {
      const target = this.modals.find(
        (m) =>
          (body.view_id !== undefined && m.id === body.view_id) ||
          (body.external_id !== undefined && m.view.external_id === body.external_id),
      )
      if (!target) return { ok: false, error: 'not_found' }
      if (body.hash !== undefined && body.hash !== target.hash)
        return { ok: false, error: 'hash_conflict' }
      target.view = view as Json
      target.hash = this.#viewHash()
      return held(target)
    }
    const user = body.user_id
    if (typeof user !== 'string' || !/^[UW][A-Z0-9]+$/.test(user))
      return { ok: false, error: 'invalid_arguments' }
    const home = {
      id: this.homes.get(user)?.id ?? this.#viewId(),
      hash: this.#viewHash(),
      view: view as Json,
      user,
    }
    this.homes.set(user, home)
    return held(home)
  }

  #viewId(): string {
    return `V${String(this.#nextView++).padStart(8, '0')}`
  }

  #viewHash(): string {
    return `${Date.now()}.${Math.random().toString(36).slice(2, 10)}`
  }

  /** The text each stream call carried, in order, for the stream message `ts`. */
  streamCalls(ts?: string): FakeSlackCall[] {
    return this.calls.filter(
      (c) =>
        (STREAM_METHODS as readonly string[]).includes(c.method) &&
        (c.response as Json)?.ok === true &&
        (ts === undefined || (c.response as Json).ts === ts),
    )
  }

  #checkArguments(method: Method, body: Json): string | undefined {
    const isId = (v: unknown) => typeof v === 'string' && v.length > 0
    const optionalString = (v: unknown) => v === undefined || typeof v === 'string'
    if (method === 'assistant.threads.setStatus') {
      const ok = isId(body.channel_id) && isId(body.thread_ts) && typeof body.status === 'string'
      return ok ? undefined : 'invalid_arguments'
    }
    if (!isId(body.channel)) return 'invalid_arguments'
    if ((STREAM_METHODS as readonly string[]).includes(method)) return streamProblem(method, body)
    if (method === 'chat.update' && !isId(body.ts)) return 'invalid_arguments'
    if (method === 'chat.postEphemeral' && !isId(body.user)) return 'invalid_arguments'
    if (!optionalString(body.text) || !optionalString(body.thread_ts)) return 'invalid_arguments'
    if (body.blocks !== undefined && !Array.isArray(body.blocks)) return 'invalid_arguments'
    if (!isId(body.text) && !Array.isArray(body.blocks)) return 'invalid_arguments'
    if (Array.isArray(body.blocks) && !blocksWithinLimits(body.blocks)) return 'invalid_blocks'
    return undefined
  }

  #ts(): string {
    return `1700000000.${String(this.#nextTs++).padStart(6, '0')}`
  }
}

/** What Slack refuses in a streaming call: no thread, no reader in a channel, no text. */
function streamProblem(method: string, body: Json): string | undefined {
  const isId = (v: unknown) => typeof v === 'string' && v.length > 0
  const text = body.markdown_text
  if (text !== undefined && (typeof text !== 'string' || text.length > 12_000))
    return 'invalid_arguments'
  if (method === 'chat.startStream') {
    if (!isId(body.thread_ts)) return 'invalid_arguments'
    // Streaming into a channel (not a DM) names who reads it.
    const dm = String(body.channel).startsWith('D')
    if (!dm && (!isId(body.recipient_team_id) || !isId(body.recipient_user_id)))
      return 'invalid_arguments'
    return undefined
  }
  if (!isId(body.ts)) return 'invalid_arguments'
  if (method === 'chat.appendStream' && !isId(text)) return 'invalid_arguments'
  return undefined
}

/**
 * What Slack refuses in a view: a modal needs a title, and a submit button when it has inputs
 * (title, submit and close at most 24 characters); a view holds at most 100 blocks, and
 * `private_metadata` at most 3000 characters, `callback_id` 255; every input block has a label
 * and an element, and each block id appears once.
 */
function viewProblem(view: Json, type: 'modal' | 'home'): string | undefined {
  if (view.type !== type) return `view.type must be ${type}`
  const blocks = view.blocks
  if (!Array.isArray(blocks) || blocks.length > 100) return 'view.blocks: 1 to 100 blocks'
  if (!blocksWithinLimits(blocks, 100)) return 'view.blocks: a block breaks a Block Kit limit'
  const short = (t: unknown) =>
    !!t &&
    typeof t === 'object' &&
    (t as Json).type === 'plain_text' &&
    typeof (t as Json).text === 'string' &&
    ((t as Json).text as string).length > 0 &&
    ((t as Json).text as string).length <= 24
  const inputs = blocks.filter((b) => (b as Json).type === 'input') as Json[]
  if (type === 'modal') {
    if (!short(view.title)) return 'view.title: plain_text of 1 to 24 characters'
    if (view.close !== undefined && !short(view.close)) return 'view.close: at most 24 characters'
    if (view.submit !== undefined && !short(view.submit))
      return 'view.submit: at most 24 characters'
    if (inputs.length && view.submit === undefined) return 'view.submit: required with input blocks'
  } else if (inputs.length) return 'a Home tab takes no input blocks'
  if (typeof view.private_metadata === 'string' && view.private_metadata.length > 3000)
    return 'view.private_metadata: at most 3000 characters'
  if (typeof view.callback_id === 'string' && view.callback_id.length > 255)
    return 'view.callback_id: at most 255 characters'
  const ids = blocks.map((b) => (b as Json).block_id).filter((id) => id !== undefined)
  if (new Set(ids).size !== ids.length) return 'view.blocks: a block_id used twice'
  for (const input of inputs) {
    const element = input.element as Json | undefined
    if (!input.label || !element || typeof element.type !== 'string')
      return 'input: label and element required'
    if (element.type === 'plain_text_input' && typeof element.initial_value === 'string') {
      const max = typeof element.max_length === 'number' ? element.max_length : 3000
      if (element.initial_value.length > max)
        return 'plain_text_input: initial_value over max_length'
    }
    if (element.type === 'static_select') {
      const options = element.options
      if (!Array.isArray(options) || !options.length || options.length > 100)
        return 'static_select: 1 to 100 options'
    }
  }
  return undefined
}

/** The Block Kit limits Slack enforces that our messages could plausibly hit. */
function blocksWithinLimits(blocks: unknown[], maxBlocks = 50): boolean {
  if (blocks.length > maxBlocks) return false
  const ok = (node: unknown, parent?: string): boolean => {
    if (Array.isArray(node)) return node.every((n) => ok(n, parent))
    if (!node || typeof node !== 'object') return true
    const o = node as Json
    if (o.type === 'mrkdwn' || o.type === 'plain_text') {
      const max = parent === 'header' ? 150 : parent === 'button' ? 75 : 3000
      if (typeof o.text !== 'string' || o.text.length === 0 || o.text.length > max) return false
    }
    if (o.type === 'button') {
      if (typeof o.value === 'string' && o.value.length > 2000) return false
      if (typeof o.action_id === 'string' && o.action_id.length > 255) return false
      // A link button: an absolute http(s) URL of at most 3,000 characters, taken as it is.
      if (o.url !== undefined && !(typeof o.url === 'string' && isButtonUrl(o.url))) return false
    }
    return Object.values(o).every((v) => ok(v, typeof o.type === 'string' ? o.type : parent))
  }
  return ok(blocks)
}

function isButtonUrl(url: string): boolean {
  if (url.length > 3000 || !URL.canParse(url)) return false
  return ['http:', 'https:'].includes(new URL(url).protocol)
}

// ── Signed inbound requests ────────────────────────────────────────────────────────────────

/** `v0=<hex>` for a body, computed here independently of src/slack/verify.ts. */
export async function slackSignature(
  secret: string,
  timestamp: number | string,
  body: string,
): Promise<string> {
  const enc = new TextEncoder()
  const key = await crypto.subtle.importKey(
    'raw',
    enc.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  const mac = await crypto.subtle.sign('HMAC', key, enc.encode(`v0:${timestamp}:${body}`))
  return 'v0=' + [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

/** A POST as Slack sends it: signed, with the content type guessed from the body. */
export async function signedSlackRequest(input: {
  url: string
  secret: string
  body: string
  timestamp: number | string
  headers?: Record<string, string>
}): Promise<Request> {
  const json = input.body.trimStart().startsWith('{')
  return new Request(input.url, {
    method: 'POST',
    headers: {
      'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(input.timestamp),
      'x-slack-signature': await slackSignature(input.secret, input.timestamp, input.body),
      'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
      ...input.headers,
    },
    body: input.body,
  })
}

/** A slash command form body with realistic defaults; override any field. */
export function slashCommandBody(fields: { text: string } & Record<string, string>): string {
  return new URLSearchParams({
    token: 'gIkuvaNzQIHg97ATvDxqgjtO',
    team_id: 'T0001',
    team_domain: 'example',
    enterprise_id: 'E0001',
    enterprise_name: 'Example Inc',
    channel_id: 'C2147483705',
    channel_name: 'ops',
    user_id: 'U2147483697',
    user_name: 'steve',
    command: '/edgeloop',
    api_app_id: 'A123456',
    is_enterprise_install: 'false',
    response_url: 'https://hooks.slack.test/commands/1234/5678',
    trigger_id: '13345224609.738474920.8088930838d88f008e0',
    ...fields,
  }).toString()
}

/** An `event_callback` JSON body carrying an `app_mention`. */
export function eventCallbackBody(input: {
  text: string
  user?: string
  channel?: string
  ts?: string
  thread_ts?: string
  event_id?: string
  bot_id?: string
  /** The envelope's workspace (default T0001); null leaves it out. */
  team_id?: string | null
}): string {
  const ts = input.ts ?? '1700000100.000200'
  const team = input.team_id === undefined ? 'T0001' : input.team_id
  return JSON.stringify({
    token: 'XXYYZZ',
    ...(team === null ? {} : { team_id: team }),
    api_app_id: 'A123456',
    event: {
      type: 'app_mention',
      user: input.user ?? 'U2147483697',
      text: input.text,
      ts,
      channel: input.channel ?? 'C2147483705',
      event_ts: ts,
      ...(input.thread_ts ? { thread_ts: input.thread_ts } : {}),
      ...(input.bot_id ? { bot_id: input.bot_id } : {}),
    },
    type: 'event_callback',
    event_id: input.event_id ?? 'Ev0PV52K21',
    event_time: 1700000100,
    authorizations: [{ team_id: 'T0001', user_id: 'UFAKEBOT', is_bot: true }],
  })
}

/** An `event_callback` JSON body carrying `app_home_opened`: `user` opened the app's Home tab. */
export function appHomeOpenedBody(input: { user: string; event_id: string }): string {
  return JSON.stringify({
    token: 'XXYYZZ',
    team_id: 'T0001',
    api_app_id: 'A123456',
    type: 'event_callback',
    event_id: input.event_id,
    event_time: 1700000100,
    event: {
      type: 'app_home_opened',
      user: input.user,
      channel: 'D0HOME',
      tab: 'home',
      event_ts: '1.2',
    },
    authorizations: [{ team_id: 'T0001', user_id: 'UFAKEBOT', is_bot: true }],
  })
}

/**
 * A `block_actions` form body for a click on a button of a view Slack holds (the Home tab, a
 * modal): no channel and no message, the view and a fresh `trigger_id`.
 */
export function viewBlockActionsBody(input: {
  view: FakeSlackView
  user_id: string
  button: { action_id: string; value?: string; text: { text: string } }
}): string {
  const trigger = `${Date.now()}.738474920.abc${(viewClicks++).toString(16)}`
  const payload = {
    type: 'block_actions',
    user: { id: input.user_id, username: input.user_id.toLowerCase(), team_id: 'T0001' },
    api_app_id: 'A123456',
    token: 'XXYYZZ',
    container: { type: 'view', view_id: input.view.id },
    trigger_id: trigger,
    team: { id: 'T0001', domain: 'example' },
    view: { ...input.view.view, id: input.view.id, hash: input.view.hash },
    actions: [
      {
        action_id: input.button.action_id,
        block_id: 'b1',
        text: { type: 'plain_text', ...input.button.text },
        ...(input.button.value !== undefined ? { value: input.button.value } : {}),
        type: 'button',
        action_ts: '1700000200.000300',
      },
    ],
  }
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString()
}
let viewClicks = 1

/**
 * An `event_callback` JSON body carrying a `message` event (`message.channels`, `message.im`…):
 * `subtype`, `bot_id`, `edited`, `hidden` etc. as Slack sends them for edits, deletions and bots.
 */
export function messageEventBody(input: {
  text?: string
  user?: string
  channel?: string
  channel_type?: 'im' | 'channel' | 'group' | 'mpim'
  ts?: string
  thread_ts?: string
  event_id?: string
  /** Extra event fields (subtype, bot_id, message, previous_message, hidden…). */
  extra?: Record<string, unknown>
  /** The envelope's workspace (default T0001); null leaves it out. */
  team_id?: string | null
}): string {
  const ts = input.ts ?? '1700000100.000300'
  const team = input.team_id === undefined ? 'T0001' : input.team_id
  return JSON.stringify({
    token: 'XXYYZZ',
    ...(team === null ? {} : { team_id: team }),
    api_app_id: 'A123456',
    event: {
      type: 'message',
      ...(input.extra?.subtype === undefined ? { user: input.user ?? 'U2147483697' } : {}),
      ...(input.text !== undefined ? { text: input.text } : {}),
      ts,
      channel: input.channel ?? 'C2147483705',
      channel_type: input.channel_type ?? 'channel',
      event_ts: ts,
      ...(input.thread_ts ? { thread_ts: input.thread_ts } : {}),
      ...input.extra,
    },
    type: 'event_callback',
    event_id: input.event_id ?? 'Ev0PV52K22',
    event_time: 1700000100,
    authorizations: [{ team_id: 'T0001', user_id: 'UFAKEBOT', is_bot: true }],
  })
}

/** The `url_verification` body Slack sends when the events URL is saved. */
export function urlVerificationBody(challenge: string): string {
  return JSON.stringify({ token: 'XXYYZZ', challenge, type: 'url_verification' })
}

/** A button of a posted message, as its `actions` block carries it. */
export interface PostedButton {
  action_id: string
  value: string
  style?: string
  text: { type: string; text: string }
}

/** The buttons of a posted message's `actions` blocks. */
export function buttonsOf(message: FakeSlackMessage): PostedButton[] {
  return (message.blocks ?? []).flatMap((block) => {
    const b = block as { type: string; elements?: PostedButton[] }
    return b.type === 'actions' ? (b.elements ?? []) : []
  })
}

/**
 * The `block_actions` form body Slack posts when `userId` clicks the button `actionId` of a
 * posted message: the message itself (its blocks, its thread), from its channel unless `from`
 * says otherwise (a copied button elsewhere).
 */
export function messageClickBody(input: {
  message: FakeSlackMessage
  actionId: string
  userId: string
  triggerId: string
  from?: { teamId?: string; channel?: string }
}): string {
  const { message, actionId, userId } = input
  const team = input.from?.teamId ?? 'T0001'
  const channel = input.from?.channel ?? message.channel
  const button = buttonsOf(message).find((b) => b.action_id === actionId)
  if (!button) throw new Error(`message ${message.ts} has no ${actionId} button`)
  const payload = {
    type: 'block_actions',
    user: { id: userId, username: userId.toLowerCase(), name: userId.toLowerCase(), team_id: team },
    api_app_id: 'A123456',
    token: 'XXYYZZ',
    container: {
      type: 'message',
      message_ts: message.ts,
      channel_id: channel,
      is_ephemeral: false,
    },
    trigger_id: input.triggerId,
    team: { id: team, domain: 'example' },
    channel: { id: channel, name: 'ops' },
    message: {
      type: 'message',
      ts: message.ts,
      text: message.text,
      blocks: message.blocks,
      bot_id: 'B0001',
      ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}),
    },
    response_url: 'https://hooks.slack.test/actions/T0001/1/abc',
    actions: [
      {
        action_id: actionId,
        block_id: 'edgeloop_approval',
        text: button.text,
        value: button.value,
        style: button.style,
        type: 'button',
        action_ts: `${Math.floor(Date.now() / 1000)}.000300`,
      },
    ],
  }
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString()
}

/** A `block_actions` interaction form body (`payload=` URL-encoded JSON) for one button click. */
export function blockActionsBody(input: {
  action_id: string
  value: string
  user_id?: string
  username?: string
  channel_id?: string
  team_id?: string
  message_ts?: string
  response_url?: string
  /** Each click has its own (a modal opens once per trigger); one default for the rest. */
  trigger_id?: string
}): string {
  const channel = input.channel_id ?? 'C2147483705'
  const team = input.team_id ?? 'T0001'
  const messageTs = input.message_ts ?? '1700000000.000001'
  const payload = {
    type: 'block_actions',
    user: {
      id: input.user_id ?? 'U2147483697',
      username: input.username ?? 'steve',
      name: input.username ?? 'steve',
      team_id: 'T0001',
    },
    api_app_id: 'A123456',
    token: 'XXYYZZ',
    container: { type: 'message', message_ts: messageTs, channel_id: channel, is_ephemeral: false },
    trigger_id: input.trigger_id ?? '13345224609.738474920.8088930838d88f008e0',
    team: { id: team, domain: 'example' },
    channel: { id: channel, name: 'ops' },
    message: { type: 'message', ts: messageTs, text: 'Approval needed', bot_id: 'B0001' },
    response_url: input.response_url ?? 'https://hooks.slack.test/actions/T0001/1/abc',
    actions: [
      {
        action_id: input.action_id,
        block_id: 'edgeloop_approval',
        text: { type: 'plain_text', text: 'Approve', emoji: true },
        value: input.value,
        style: 'primary',
        type: 'button',
        action_ts: '1700000200.000300',
      },
    ],
  }
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString()
}

/**
 * The `state.values` Slack sends for a modal's inputs: each input's value as the person left it,
 * `typed[block_id]` where they typed or chose something, else its initial value (a
 * `static_select` by option value).
 */
export function viewStateValues(view: Json, typed: Record<string, string> = {}): Json {
  const values: Json = {}
  for (const block of (view.blocks ?? []) as Json[]) {
    if (block.type !== 'input') continue
    const element = block.element as Json
    const id = block.block_id as string
    const actionId = element.action_id as string
    let state: Json
    if (element.type === 'static_select') {
      const options = element.options as Json[]
      const selected =
        id in typed
          ? (options.find((o) => o.value === typed[id]) ?? null)
          : ((element.initial_option as Json | undefined) ?? null)
      state = { type: element.type, selected_option: selected }
    } else {
      const value =
        id in typed ? typed[id] : ((element.initial_value as string | undefined) ?? null)
      state = { type: element.type, value: value === '' ? null : value }
    }
    values[id] = { [actionId]: state }
  }
  return values
}

/** A `view_submission` interaction form body: `view` (as opened) submitted with `values`. */
export function viewSubmissionBody(input: {
  view: { id: string; hash: string; view: Json }
  values: Json
  user_id: string
  team_id?: string
}): string {
  const team = input.team_id ?? 'T0001'
  const payload = {
    type: 'view_submission',
    team: { id: team, domain: 'example' },
    user: { id: input.user_id, username: input.user_id.toLowerCase(), team_id: team },
    api_app_id: 'A123456',
    token: 'XXYYZZ',
    trigger_id: '13345224609.738474920.8088930838d88f008e1',
    view: {
      ...input.view.view,
      id: input.view.id,
      team_id: team,
      hash: input.view.hash,
      state: { values: input.values },
      app_id: 'A123456',
      root_view_id: input.view.id,
      previous_view_id: null,
      bot_id: 'B0001',
    },
    response_urls: [],
    is_enterprise_install: false,
  }
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString()
}
