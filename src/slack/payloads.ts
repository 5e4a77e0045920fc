/**
 * Schemas for what Slack sends us: slash commands, Events API bodies and `block_actions`
 * interactions. Objects are loose because Slack adds fields without notice; only what edgeloop
 * reads is required. Parsers take the raw (already verified) body and never throw.
 */
import * as z from 'zod/mini'
import { describeIssues } from '../validation/describe-issues'
import { jsonTextDepth, MAX_JSON_DEPTH } from '../validation/json-walk'

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string }

const id = z.string().check(z.minLength(1))
const slackTs = z.string().check(z.regex(/^\d+\.\d+$/, 'not a Slack message ts'))
const optionalString = z.optional(z.string())

/** Form fields of a slash command request (`application/x-www-form-urlencoded`). */
export const SlashCommandSchema = z.looseObject({
  command: z.string().check(z.regex(/^\/\S+$/, 'not a slash command')),
  text: z.string(),
  user_id: id,
  user_name: optionalString,
  channel_id: id,
  channel_name: optionalString,
  team_id: id,
  team_domain: optionalString,
  enterprise_id: optionalString,
  api_app_id: optionalString,
  response_url: z.url(),
  trigger_id: id,
})
export type SlashCommand = z.infer<typeof SlashCommandSchema>

export const UrlVerificationSchema = z.looseObject({
  type: z.literal('url_verification'),
  challenge: id,
})

export const AppMentionEventSchema = z.looseObject({
  type: z.literal('app_mention'),
  user: id,
  text: z.string(),
  channel: id,
  ts: slackTs,
  thread_ts: z.optional(slackTs),
  event_ts: optionalString,
})
export type AppMentionEvent = z.infer<typeof AppMentionEventSchema>

/**
 * The `channel_type` of the `message.*` events edgeloop subscribes to: public and private
 * channels, one-to-one DMs and group DMs (docs.slack.dev/reference/events/message.mpim).
 */
const CONVERSATION_TYPES = ['im', 'mpim', 'channel', 'group'] as const

/** A person's plain message (no subtype): in a direct message with the app, or in a thread. */
export const UserMessageEventSchema = z.looseObject({
  type: z.literal('message'),
  user: id,
  text: z.string(),
  channel: id,
  channel_type: z.enum(CONVERSATION_TYPES),
  ts: slackTs,
  thread_ts: z.optional(slackTs),
  event_ts: optionalString,
})
export type UserMessageEvent = z.infer<typeof UserMessageEventSchema>

export const EventCallbackSchema = z.looseObject({
  type: z.literal('event_callback'),
  event_id: id,
  team_id: optionalString,
  api_app_id: optionalString,
  event_time: z.optional(z.number()),
  event: z.looseObject({
    type: id,
    subtype: optionalString,
    bot_id: optionalString,
    user: optionalString,
    text: z.optional(z.unknown()),
    channel_type: optionalString,
  }),
  /** Who the event is delivered to: the app's bot user is the entry with `is_bot`. */
  authorizations: z.optional(
    z.array(z.looseObject({ user_id: optionalString, is_bot: z.optional(z.boolean()) })),
  ),
})

/** What an Events API body asks of us. `ignored` bodies are acknowledged and dropped. */
export type SlackEventBody =
  | { kind: 'url_verification'; challenge: string }
  | { kind: 'app_mention'; eventId: string; teamId?: string; event: AppMentionEvent }
  | { kind: 'message'; eventId: string; teamId?: string; event: UserMessageEvent }
  | { kind: 'app_home_opened'; eventId: string; teamId?: string; user: string }
  | { kind: 'ignored'; eventId?: string; reason: string }

const BlockActionSchema = z.looseObject({
  action_id: id,
  block_id: z.string(),
  value: optionalString,
  type: optionalString,
  action_ts: optionalString,
})

/**
 * The `payload` JSON of a `block_actions` interaction: a click on a message's button (with its
 * channel and message) or on a view's (the Home tab: neither).
 */
export const BlockActionsSchema = z.looseObject({
  type: z.literal('block_actions'),
  user: z.looseObject({
    id,
    username: optionalString,
    name: optionalString,
    team_id: optionalString,
  }),
  team: z.optional(z.looseObject({ id, domain: optionalString })),
  actions: z.array(BlockActionSchema).check(z.minLength(1)),
  channel: z.optional(z.nullable(z.looseObject({ id, name: optionalString }))),
  message: z.optional(
    z.looseObject({ ts: slackTs, text: optionalString, thread_ts: z.optional(slackTs) }),
  ),
  container: z.looseObject({
    type: id,
    message_ts: optionalString,
    channel_id: optionalString,
    is_ephemeral: z.optional(z.boolean()),
  }),
  response_url: z.optional(z.url()),
  trigger_id: optionalString,
})
export type BlockActions = z.infer<typeof BlockActionsSchema>

/**
 * The `payload` JSON of a `view_submission` interaction: a modal of ours submitted. `state.values`
 * holds each input's state by block id and action id.
 */
export const ViewSubmissionSchema = z.looseObject({
  type: z.literal('view_submission'),
  user: z.looseObject({ id, username: optionalString, team_id: optionalString }),
  team: z.optional(z.nullable(z.looseObject({ id, domain: optionalString }))),
  view: z.looseObject({
    id,
    callback_id: z.string(),
    private_metadata: z.string(),
    state: z.looseObject({
      values: z.record(z.string(), z.record(z.string(), z.record(z.string(), z.unknown()))),
    }),
  }),
})
export type ViewSubmission = z.infer<typeof ViewSubmissionSchema>

/** An `app_home_opened` event: a person opened the app's Home tab. */
export const AppHomeOpenedSchema = z.looseObject({
  type: z.literal('app_home_opened'),
  user: id,
  tab: z.optional(z.string()),
})

/** Parse a slash command's form body. */
export function parseSlashCommand(rawBody: string): Parsed<SlashCommand> {
  return validate('Slack slash command', SlashCommandSchema, formFields(rawBody))
}

/** Parse an Events API body: a URL verification, an `app_mention`, or something to ignore. */
export function parseEventBody(rawBody: string): Parsed<SlackEventBody> {
  const json = parseJson('Slack event body', rawBody)
  if (!json.ok) return json
  if (!isObject(json.value)) return { ok: false, error: 'Slack event body: expected an object' }
  const type = json.value.type
  if (typeof type !== 'string') return { ok: false, error: 'Slack event body: type: missing' }
  if (type === 'url_verification') {
    const body = validate('Slack url_verification', UrlVerificationSchema, json.value)
    return body.ok
      ? { ok: true, value: { kind: 'url_verification', challenge: body.value.challenge } }
      : body
  }
  if (type !== 'event_callback') {
    // e.g. `app_rate_limited`: Slack only wants a 200 back.
    return { ok: true, value: { kind: 'ignored', reason: `envelope type ${type}` } }
  }
  const envelope = validate('Slack event_callback', EventCallbackSchema, json.value)
  if (!envelope.ok) return envelope
  const { event_id: eventId, team_id: teamId, event } = envelope.value
  const ignore = (reason: string): Parsed<SlackEventBody> => ({
    ok: true,
    value: { kind: 'ignored', eventId, reason },
  })
  if (event.type === 'app_home_opened') {
    const home = validate('Slack app_home_opened event', AppHomeOpenedSchema, event)
    if (!home.ok) return home
    // The Messages tab is the DM (its messages come as message.im); only Home shows a view.
    if (home.value.tab !== undefined && home.value.tab !== 'home') return ignore('messages tab')
    const user = home.value.user
    return {
      ok: true,
      value: { kind: 'app_home_opened', eventId, ...(teamId ? { teamId } : {}), user },
    }
  }
  if (event.type !== 'app_mention' && event.type !== 'message') {
    return ignore(`event type ${event.type}`)
  }
  // Edits, deletions, joins, bot posts… are not someone asking: they start nothing.
  if (event.subtype !== undefined) return ignore(`${event.type} subtype ${event.subtype}`)
  // A bot (possibly ourselves) must not start runs: that way lies a loop.
  if (event.bot_id) return ignore(`${event.type} from a bot`)
  const botUser = envelope.value.authorizations?.find((a) => a.is_bot)?.user_id
  if (event.user === undefined) return ignore(`${event.type} without a user`)
  if (botUser && event.user === botUser) return ignore(`${event.type} from this app's bot user`)
  // A thread is the conversation of one workspace: a message that names none cannot be matched
  // to the thread it replies in, so it neither continues nor starts anything.
  if (!teamId) return ignore(`${event.type} without team_id`)
  if (event.type === 'app_mention') {
    const mention = validate('Slack app_mention event', AppMentionEventSchema, event)
    if (!mention.ok) return mention
    return { ok: true, value: { kind: 'app_mention', eventId, teamId, event: mention.value } }
  }
  const conversation = event.channel_type
  // Another kind of conversation (e.g. the legacy `app_home`) is not one edgeloop answers in; a
  // 400 would only make Slack send it again.
  if (conversation && !(CONVERSATION_TYPES as readonly string[]).includes(conversation)) {
    return ignore(`message in a conversation of type ${conversation}`)
  }
  const message = validate('Slack message event', UserMessageEventSchema, event)
  if (!message.ok) return message
  const m = message.value
  if (m.channel_type !== 'im') {
    // In a channel, and in a group DM (`mpim`: people talk to each other there, so the app must
    // not answer every message), only a reply in a thread may continue a conversation. A mention
    // of the app arrives as app_mention as well (in group DMs too), and is answered from that one.
    const where = m.channel_type === 'mpim' ? 'group DM' : 'channel'
    if (!m.thread_ts || m.thread_ts === m.ts) return ignore(`${where} message outside a thread`)
    if (mentions(m.text, botUser)) return ignore('message mentions the app (app_mention answers)')
  }
  return { ok: true, value: { kind: 'message', eventId, teamId, event: m } }
}

/** True when `text` mentions `user` (`<@U…>` or `<@U…|name>`); false when we don't know who we are. */
function mentions(text: string, user: string | undefined): boolean {
  return !!user && (text.includes(`<@${user}>`) || text.includes(`<@${user}|`))
}

/** Parse an interactivity request (form field `payload` holding JSON) as `block_actions`. */
export function parseBlockActions(rawBody: string): Parsed<BlockActions> {
  const payload = formFields(rawBody).payload
  if (payload === undefined) {
    return { ok: false, error: 'Slack interaction: missing form field "payload"' }
  }
  const json = parseJson('Slack interaction payload', payload)
  if (!json.ok) return json
  const type = isObject(json.value) ? json.value.type : undefined
  if (type !== 'block_actions') {
    return {
      ok: false,
      error: `Slack interaction: unsupported type ${JSON.stringify(type)} (only block_actions)`,
    }
  }
  const parsed = validate('Slack block_actions', BlockActionsSchema, json.value)
  if (!parsed.ok || parsed.value.container.type !== 'message') return parsed
  // A click on a message's button says which message, in which channel.
  for (const key of ['message', 'channel'] as const) {
    if (!parsed.value[key]) return { ok: false, error: `Slack block_actions: ${key}: missing` }
  }
  return parsed
}

/** The `type` of an interactivity request's payload (`block_actions`, `view_submission`, …). */
export function interactionType(rawBody: string): string | undefined {
  const payload = formFields(rawBody).payload
  if (payload === undefined || jsonTextDepth(payload, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) return
  try {
    const type = (JSON.parse(payload) as { type?: unknown } | null)?.type
    return typeof type === 'string' ? type : undefined
  } catch {
    return undefined
  }
}

/** Parse an interactivity request as `view_submission`. */
export function parseViewSubmission(rawBody: string): Parsed<ViewSubmission> {
  const payload = formFields(rawBody).payload
  if (payload === undefined) {
    return { ok: false, error: 'Slack interaction: missing form field "payload"' }
  }
  const json = parseJson('Slack interaction payload', payload)
  if (!json.ok) return json
  return validate('Slack view_submission', ViewSubmissionSchema, json.value)
}

/** Remove the leading `<@U…>` mentions (e.g. of the bot) from an `app_mention` text. */
export function stripMention(text: string): string {
  return text.replace(/^(?:\s*<@[A-Z0-9]+(?:\|[^>]*)?>)+/, '').trim()
}

function formFields(rawBody: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(rawBody))
}

function parseJson(what: string, text: string): Parsed<unknown> {
  if (jsonTextDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    return { ok: false, error: `${what} nests deeper than ${MAX_JSON_DEPTH} levels` }
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch {
    return { ok: false, error: `${what} is not valid JSON` }
  }
}

function validate<S extends z.ZodMiniType>(
  what: string,
  schema: S,
  input: unknown,
): Parsed<z.infer<S>> {
  if (!isObject(input)) {
    return { ok: false, error: `${what}: expected an object` }
  }
  const result = schema.safeParse(input)
  if (result.success) return { ok: true, value: result.data }
  return { ok: false, error: `${what}: ${describeIssues(result.error.issues, input).join('; ')}` }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
