/**
 * A Slack-started run that needs the deployment's connection again (docs/slack-app.md#connections),
 * through the Worker's fetch with signed Slack requests and the fake Slack Web API: its grant dies
 * while an approval waits, so the approved call waits on a `connect` item, posted as a card with
 * Connect and Decline. Connect sends the approver who clicked a single-use link, privately;
 * following it to the authorization server and back resolves the item, the call goes once, and
 * the card says who connected it. Someone who may not grant it is told why.
 */
import { describe, expect, it } from 'vitest'
import { APPROVE_ACTION_ID } from '../../src/slack/approval-message'
import { CONNECT_ACTION_ID, DECLINE_CONNECT_ACTION_ID } from '../../src/slack/connect-message'
import { reply } from '../fakes/fake-openai'
import {
  appHomeOpenedBody,
  blockActionsBody,
  FakeSlack,
  signedSlackRequest,
  slashCommandBody,
  viewBlockActionsBody,
  type FakeSlackMessage,
} from '../fakes/fake-slack'
import { api, drainAlarms, getRun, getTrace, JSON_AUTH, ORIGIN } from '../service/harness'
import {
  APPROVER as APPROVER_TOKEN,
  callback,
  connectLink,
  followLink,
  useOAuthFakes,
} from './oauth-helpers'

let slack: FakeSlack
const { fakes, oauth } = useOAuthFakes(() => {
  slack = new FakeSlack({ token: 'xoxb-test-token' })
  return { 'slack.test': slack.handler }
})

const CHANNEL = 'C2147483705'
const PERSON = 'U2147483697'
const APPROVER = 'UAPPROVER1'

async function slackPost(path: string, body: string): Promise<Response> {
  const req = await signedSlackRequest({
    url: `${ORIGIN}${path}`,
    secret: 'test-signing-secret',
    body,
    timestamp: Math.floor(Date.now() / 1000),
  })
  return api(path, { method: 'POST', headers: req.headers, body })
}

function click(card: FakeSlackMessage, actionId: string, user: string) {
  const blocks = (card.blocks ?? []) as {
    type: string
    elements?: { action_id: string; value: string }[]
  }[]
  const button = blocks.flatMap((b) => b.elements ?? []).find((e) => e.action_id === actionId)!
  return slackPost(
    '/slack/interactions',
    blockActionsBody({
      action_id: actionId,
      value: button.value,
      user_id: user,
      message_ts: card.ts,
    }),
  )
}

/** `/edgeloop <text>` from PERSON; the run's id, its first slice run. */
async function slashRun(text: string): Promise<string> {
  const res = await slackPost(
    '/slack/commands',
    // A trigger of its own: the test clock stands still, and Slack's retry of one command is the
    // same run.
    slashCommandBody({ text, trigger_id: `${crypto.randomUUID()}.1.abc` }),
  )
  const runId = /run_[0-9a-f]{32}/.exec(((await res.json()) as { text: string }).text)![0]
  await drainAlarms(runId)
  return runId
}

/**
 * Ends a run left waiting: a later test's grant would otherwise resume it, as a grant resumes
 * every run waiting for that connection.
 */
async function cancelRun(runId: string): Promise<void> {
  const cancelled = await api(`/v1/runs/${runId}/cancel`, {
    method: 'POST',
    headers: JSON_AUTH,
    body: '{}',
  })
  expect(cancelled.status).toBe(202)
  await drainAlarms(runId)
}

async function waitingForConnection() {
  const granted = await followLink(await connectLink('wiki', APPROVER_TOKEN), oauth.auth)
  expect((await callback(granted.callback, granted.cookie)).status).toBe(200)
  fakes.ai.enqueue(
    reply.toolCalls([{ id: 'c1', name: 'wiki__delete_page', arguments: { page: 'old' } }]),
    reply.text('Deleted.'),
  )
  const runId = await slashRun('delete the old page')
  const approval = slack.messages(CHANNEL).find((m) => m.text?.startsWith('Approval needed'))!
  // While the approval waits, the grant dies: its access token expires, its refresh is refused.
  oauth.auth.expireAccessTokens()
  oauth.auth.revokeRefreshTokens()
  expect((await click(approval, APPROVE_ACTION_ID, APPROVER)).status).toBe(200)
  await drainAlarms(runId)
  const item = (await getRun(runId)).pendingApprovals[0]!
  expect(item).toMatchObject({ kind: 'connect', ask: { details: { owner: 'deployment' } } })
  const card = slack.messages(CHANNEL).find((m) => m.text?.startsWith('Connection needed'))!
  return { runId, card: structuredClone(card) }
}

describe('a connection a Slack run needs', () => {
  it('Connect sends the approver a single-use link; the grant resumes the run', async () => {
    const { runId, card } = await waitingForConnection()
    expect(JSON.stringify(card.blocks)).toContain('Connect the wiki MCP server for the deployment')
    expect((await click(card, CONNECT_ACTION_ID, APPROVER)).status).toBe(200)
    const note = slack.ephemerals(CHANNEL).find((e) => e.user === APPROVER)!
    const link = /<(https:\/\/edgeloop\.test\/oauth\/connect\/[^|>]+)\|/.exec(note.text ?? '')![1]!
    const browser = await followLink(link, oauth.auth)
    expect((await callback(browser.callback, browser.cookie)).status).toBe(200)
    await drainAlarms(runId)
    expect(await getTrace(runId)).toMatchObject({ ok: true, answer: 'Deleted.' })
    expect(oauth.wiki.calls.map((c) => c.tool)).toEqual(['delete_page'])
    const replaced = slack.messages(CHANNEL).find((m) => m.ts === card.ts)!
    expect(replaced.text).toBe(`:white_check_mark: Connected by <@${APPROVER}>`)
  })

  it('Connect in the Home tab opens a modal whose button is the link itself', async () => {
    const { runId } = await waitingForConnection()
    await slackPost(
      '/slack/events',
      appHomeOpenedBody({ user: APPROVER, event_id: `EvHome${crypto.randomUUID().slice(0, 8)}` }),
    )
    const home = slack.homes.get(APPROVER)!
    type Button = { action_id: string; value?: string; text: { text: string }; url?: string }
    const buttons = (home.view.blocks as { type: string; elements?: Button[] }[]).flatMap((b) =>
      b.type === 'actions' ? (b.elements ?? []) : [],
    )
    const connect = buttons.find(
      (b) => b.action_id === CONNECT_ACTION_ID && JSON.parse(b.value!).r === runId,
    )!
    const clicked = await slackPost(
      '/slack/interactions',
      viewBlockActionsBody({ view: home, user_id: APPROVER, button: connect }),
    )
    expect(clicked.status).toBe(200)
    // views.open as Slack took it: the URL is the button's `url`, as made, nothing escaped.
    const opened = slack.succeeded('views.open').at(-1)!.body!.view as {
      blocks: { type: string; text?: { text: string }; elements?: Button[] }[]
    }
    const link = opened.blocks.flatMap((b) => b.elements ?? []).find((e) => e.url)!
    expect(link.text.text).toBe('Connect wiki')
    expect(link.url).toMatch(/^https:\/\/edgeloop\.test\/oauth\/connect\/[A-Za-z0-9_-]+$/)
    expect(JSON.stringify(opened)).not.toContain('&lt;')
    // The link works: followed to the authorization server and back, the run resumes.
    const browser = await followLink(link.url!, oauth.auth)
    expect((await callback(browser.callback, browser.cookie)).status).toBe(200)
    await drainAlarms(runId)
    expect(await getTrace(runId)).toMatchObject({ ok: true, answer: 'Deleted.' })
    expect(oauth.wiki.calls.map((c) => c.tool)).toEqual(['delete_page'])
    // Slack reports a click on a link button too; it decides nothing and is acknowledged.
    const ack = await slackPost(
      '/slack/interactions',
      viewBlockActionsBody({ view: slack.modals.at(-1)!, user_id: APPROVER, button: link }),
    )
    expect(ack.status).toBe(200)
  })

  it('someone who is not an approver is told why; no link is made', async () => {
    const { runId, card } = await waitingForConnection()
    await click(card, CONNECT_ACTION_ID, PERSON)
    expect(slack.ephemerals(CHANNEL).at(-1)).toMatchObject({
      user: PERSON,
      text: expect.stringContaining('granted by an approver'),
    })
    expect((await getRun(runId)).pendingApprovals).toMatchObject([{ kind: 'connect' }])
    await cancelRun(runId)
  })

  it("a person's own connection is listed in their Home tab, not in an approver's", async () => {
    // PERSON, who is not an approver, starts a run that needs their own tracker connection.
    fakes.ai.enqueue(
      // A Slack run asks for every tool: a server it could not list is offered as one stand-in.
      reply.toolCalls([{ id: 'c1', name: 'tracker__unavailable', arguments: {} }]),
      reply.text('Found none.'),
    )
    const runId = await slashRun('search bugs')
    const item = (await getRun(runId)).pendingApprovals[0]!
    expect(item).toMatchObject({
      kind: 'connect',
      ask: { details: { owner: `slack:${PERSON}` } },
    })
    const homeOf = async (user: string) => {
      await slackPost(
        '/slack/events',
        appHomeOpenedBody({ user, event_id: `EvHome${crypto.randomUUID().slice(0, 8)}` }),
      )
      const view = slack.homes.get(user)!.view
      type Button = { action_id: string; value?: string; text: { text: string } }
      const buttons = (view.blocks as { type: string; elements?: Button[] }[]).flatMap((b) =>
        b.type === 'actions' ? (b.elements ?? []) : [],
      )
      return { text: JSON.stringify(view.blocks), buttons }
    }
    // The approver may not grant PERSON's connection: it is not in their tab.
    const approverHome = await homeOf(APPROVER)
    expect(approverHome.text).not.toContain(runId)
    // PERSON is not an approver, yet their own connection is theirs to grant: it is listed with
    // Connect, and no notice says nothing is theirs.
    const personHome = await homeOf(PERSON)
    expect(personHome.text).toContain(runId)
    expect(personHome.text).not.toContain('not in SLACK_APPROVERS')
    const connect = personHome.buttons.find((b) => b.action_id === CONNECT_ACTION_ID)!
    const clicked = await slackPost(
      '/slack/interactions',
      viewBlockActionsBody({ view: slack.homes.get(PERSON)!, user_id: PERSON, button: connect }),
    )
    expect(clicked.status).toBe(200)
    // Theirs to grant: the modal holds a link for them.
    const opened = JSON.stringify(slack.succeeded('views.open').at(-1)!.body!.view)
    expect(opened).toMatch(/https:\/\/edgeloop\.test\/oauth\/connect\/[A-Za-z0-9_-]+/)
    // Another non-approver sees neither the item nor a button, and is told why.
    const otherHome = await homeOf('UOTHER0001')
    expect(otherHome.text).not.toContain(runId)
    expect(otherHome.text).toContain('not in SLACK_APPROVERS')
    await cancelRun(runId)
  })

  it('Decline closes the item: the call is answered without running', async () => {
    const { runId, card } = await waitingForConnection()
    await click(card, DECLINE_CONNECT_ACTION_ID, APPROVER)
    await drainAlarms(runId)
    expect(oauth.wiki.calls).toEqual([])
    const call = (await getTrace(runId)).steps[0]!.calls[0]!
    expect(call.approval).toMatchObject({ kind: 'connect', decision: 'denied' })
  })
})
