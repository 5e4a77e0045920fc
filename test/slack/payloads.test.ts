import { describe, expect, it } from 'vitest'
import {
  parseBlockActions,
  parseEventBody,
  parseSlashCommand,
  stripMention,
} from '../../src/slack/payloads'
import {
  blockActionsBody,
  eventCallbackBody,
  messageEventBody,
  slashCommandBody,
  urlVerificationBody,
} from '../fakes/fake-slack'

describe('parseSlashCommand', () => {
  it('reads the fields edgeloop uses and keeps unknown ones', () => {
    const result = parseSlashCommand(
      slashCommandBody({ text: 'why is p99 up? & fix it', new_field: 'x' }),
    )
    expect(result).toMatchObject({
      ok: true,
      value: {
        command: '/edgeloop',
        text: 'why is p99 up? & fix it',
        user_id: 'U2147483697',
        channel_id: 'C2147483705',
        team_id: 'T0001',
        response_url: 'https://hooks.slack.test/commands/1234/5678',
        trigger_id: '13345224609.738474920.8088930838d88f008e0',
        new_field: 'x',
      },
    })
  })

  it('accepts an empty text, as Slack sends for a bare /agent', () => {
    expect(parseSlashCommand(slashCommandBody({ text: '' }))).toMatchObject({
      ok: true,
      value: { text: '' },
    })
  })

  const without = (field: string) => {
    const params = new URLSearchParams(slashCommandBody({ text: 'hi' }))
    params.delete(field)
    return params.toString()
  }
  it.each([
    ['no user_id', without('user_id'), /user_id: missing/],
    ['no channel_id', without('channel_id'), /channel_id: missing/],
    ['no response_url', without('response_url'), /response_url/],
    [
      'a response_url that is not a URL',
      slashCommandBody({ text: 'x', response_url: 'nope' }),
      /response_url/,
    ],
    ['a command without a slash', slashCommandBody({ text: 'x', command: 'agent' }), /command/],
    ['an empty body', '', /Slack slash command/],
    ['a JSON body', '{"command":"/agent"}', /Slack slash command/],
  ])('rejects %s', (_name, body, error) => {
    const result = parseSlashCommand(body)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.error).toMatch(error)
  })
})

describe('parseEventBody', () => {
  it('answers url_verification with its challenge', () => {
    expect(
      parseEventBody(urlVerificationBody('3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P')),
    ).toEqual({
      ok: true,
      value: {
        kind: 'url_verification',
        challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      },
    })
  })

  it('reads an app_mention with its event id and thread', () => {
    const body = eventCallbackBody({
      text: '<@UBOT> restart the api',
      thread_ts: '1700000000.000100',
      event_id: 'Ev123',
    })
    expect(parseEventBody(body)).toMatchObject({
      ok: true,
      value: {
        kind: 'app_mention',
        eventId: 'Ev123',
        teamId: 'T0001',
        event: {
          type: 'app_mention',
          user: 'U2147483697',
          text: '<@UBOT> restart the api',
          channel: 'C2147483705',
          ts: '1700000100.000200',
          thread_ts: '1700000000.000100',
        },
      },
    })
  })

  it.each([
    [
      'another event type',
      JSON.stringify({
        type: 'event_callback',
        event_id: 'Ev1',
        event: { type: 'reaction_added' },
      }),
      'event type reaction_added',
    ],
    [
      'a message without a user',
      JSON.stringify({ type: 'event_callback', event_id: 'Ev1', event: { type: 'message' } }),
      'message without a user',
    ],
    [
      'a message that names no workspace',
      messageEventBody({ text: 'more', thread_ts: '1700000000.000100', team_id: null }),
      'message without team_id',
    ],
    [
      'app_rate_limited',
      JSON.stringify({ type: 'app_rate_limited', minute_rate_limited: 1 }),
      'envelope type app_rate_limited',
    ],
    [
      'a mention from a bot',
      eventCallbackBody({ text: '<@UBOT> hi', bot_id: 'B1' }),
      'app_mention from a bot',
    ],
  ])('ignores %s', (_name, body, reason) => {
    expect(parseEventBody(body)).toMatchObject({ ok: true, value: { kind: 'ignored', reason } })
  })

  it.each([
    ['a direct message', { channel: 'D1', channel_type: 'im' as const, text: 'check the gateway' }],
    [
      'a reply in a DM thread',
      { channel: 'D1', channel_type: 'im' as const, thread_ts: '1700000000.000100', text: 'and?' },
    ],
    [
      'a reply in a channel thread',
      { thread_ts: '1700000000.000100', text: 'and the order service?' },
    ],
    [
      'a reply in a group DM thread',
      {
        channel: 'G1',
        channel_type: 'mpim' as const,
        thread_ts: '1700000000.000100',
        text: 'and?',
      },
    ],
  ])('reads %s as a message', (_name, input) => {
    expect(parseEventBody(messageEventBody({ ...input, event_id: 'Ev9' }))).toMatchObject({
      ok: true,
      value: { kind: 'message', eventId: 'Ev9', teamId: 'T0001', event: { text: input.text } },
    })
  })

  it.each([
    [
      'an edit',
      { extra: { subtype: 'message_changed', hidden: true } },
      'message subtype message_changed',
    ],
    ['a deletion', { extra: { subtype: 'message_deleted' } }, 'message subtype message_deleted'],
    [
      'a bot post',
      { extra: { subtype: 'bot_message', bot_id: 'B1' } },
      'message subtype bot_message',
    ],
    [
      'a bot user message',
      { text: 'x', thread_ts: '1.2', extra: { bot_id: 'B1' } },
      'message from a bot',
    ],
    [
      "the app's own bot user",
      { text: 'x', thread_ts: '1.2', user: 'UFAKEBOT' },
      "message from this app's bot user",
    ],
    ['a top-level channel message', { text: 'x' }, 'channel message outside a thread'],
    [
      'a thread root',
      { text: 'x', ts: '1.2', thread_ts: '1.2' },
      'channel message outside a thread',
    ],
    [
      'a mention as a message',
      { text: '<@UFAKEBOT|edgeloop> x', thread_ts: '1.2' },
      'message mentions the app',
    ],
    [
      'a top-level group DM message',
      { text: 'lunch?', channel: 'G1', channel_type: 'mpim' as const },
      'group DM message outside a thread',
    ],
    [
      'a mention as a group DM message',
      { text: '<@UFAKEBOT> x', channel: 'G1', channel_type: 'mpim' as const, thread_ts: '1.2' },
      'message mentions the app',
    ],
    [
      'a message in a conversation type edgeloop does not serve',
      { text: 'x', channel: 'D1', extra: { channel_type: 'app_home' } },
      'message in a conversation of type app_home',
    ],
    [
      'a bot in a group DM',
      { text: 'x', channel: 'G1', channel_type: 'mpim' as const, extra: { bot_id: 'B1' } },
      'message from a bot',
    ],
  ])('ignores %s', (_name, input, reason) => {
    const parsed = parseEventBody(messageEventBody(input))
    expect(parsed.ok && parsed.value.kind === 'ignored' && parsed.value.reason).toContain(reason)
  })

  const mention = JSON.parse(eventCallbackBody({ text: 'hi' }))
  it.each([
    ['not JSON', '{oops', /not valid JSON/],
    ['a JSON array', '[]', /expected an object/],
    ['null', 'null', /expected an object/],
    ['an object without type', '{"challenge":"x"}', /type: missing/],
    ['url_verification without challenge', '{"type":"url_verification"}', /challenge: missing/],
    [
      'event_callback without event_id',
      JSON.stringify({ ...mention, event_id: undefined }),
      /event_id: missing/,
    ],
    [
      'event_callback without event',
      JSON.stringify({ ...mention, event: undefined }),
      /event: missing/,
    ],
    [
      'app_mention without channel',
      JSON.stringify({ ...mention, event: { ...mention.event, channel: undefined } }),
      /channel: missing/,
    ],
    [
      'app_mention with a bad ts',
      JSON.stringify({ ...mention, event: { ...mention.event, ts: 'yesterday' } }),
      /ts/,
    ],
    [
      'app_mention whose text is a number',
      JSON.stringify({ ...mention, event: { ...mention.event, text: 5 } }),
      /text: expected string, got number/,
    ],
  ])('rejects %s', (_name, body, error) => {
    const result = parseEventBody(body)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.error).toMatch(error)
  })
})

describe('parseBlockActions', () => {
  it('reads a button click', () => {
    const body = blockActionsBody({
      action_id: 'edgeloop_approve',
      value: '{"r":"run1","c":"call1","h":"ab"}',
      user_id: 'U0APPROVER',
      username: 'alice',
      message_ts: '1700000000.000009',
    })
    expect(parseBlockActions(body)).toMatchObject({
      ok: true,
      value: {
        type: 'block_actions',
        user: { id: 'U0APPROVER', username: 'alice' },
        actions: [
          {
            action_id: 'edgeloop_approve',
            value: '{"r":"run1","c":"call1","h":"ab"}',
            block_id: 'edgeloop_approval',
          },
        ],
        channel: { id: 'C2147483705' },
        message: { ts: '1700000000.000009' },
        container: { type: 'message', message_ts: '1700000000.000009' },
        response_url: 'https://hooks.slack.test/actions/T0001/1/abc',
      },
    })
  })

  const payload = JSON.parse(
    new URLSearchParams(blockActionsBody({ action_id: 'edgeloop_deny', value: 'v' })).get(
      'payload',
    )!,
  )
  const form = (p: unknown) => new URLSearchParams({ payload: JSON.stringify(p) }).toString()
  it.each([
    ['no payload field', 'foo=bar', /missing form field "payload"/],
    ['a payload that is not JSON', 'payload=%7Bnope', /not valid JSON/],
    [
      'a view_submission',
      form({ ...payload, type: 'view_submission' }),
      /unsupported type "view_submission"/,
    ],
    ['no actions', form({ ...payload, actions: [] }), /actions/],
    [
      'an action without action_id',
      form({ ...payload, actions: [{ block_id: 'b', value: 'v' }] }),
      /actions\.0\.action_id: missing/,
    ],
    ['no user', form({ ...payload, user: undefined }), /user: missing/],
    ['no message', form({ ...payload, message: undefined }), /message: missing/],
    ['no channel', form({ ...payload, channel: undefined }), /channel: missing/],
  ])('rejects %s', (_name, body, error) => {
    const result = parseBlockActions(body)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.error).toMatch(error)
  })
})

describe('stripMention', () => {
  it.each([
    ['<@U012BOT> restart api', 'restart api'],
    ['<@U012BOT|edgeloop> restart api', 'restart api'],
    ['  <@U012BOT> <@W0OTHER>  restart api ', 'restart api'],
    ['restart <@U012BOT> api', 'restart <@U012BOT> api'],
    ['<@U012BOT>', ''],
    ['no mention', 'no mention'],
  ])('%j → %j', (text, expected) => {
    expect(stripMention(text)).toBe(expected)
  })
})
