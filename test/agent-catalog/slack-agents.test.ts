/**
 * Agents in Slack end to end, with agents no shipped one is (test/agent-catalog/test-agents.ts):
 * signed slash commands and Events API posts through the Worker's fetch, the fake Slack Web API
 * and the fake model. An agent that names channels answers mentions and slash commands there;
 * `/edgeloop <agent>: <task>` picks one anywhere; the approval card names the agent; a structured
 * answer is posted compact; a run of the API posts its approval card in the agent's approvals
 * channel. A channel claimed twice, or written as a #name, is a 503.
 */
import { env } from 'cloudflare:workers'
import { createExecutionContext } from 'cloudflare:test'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import worker from '../../src/index'
import type { Env } from '../../src/env'
import incidentInstructions from './incident.md?raw'
import { INCIDENT_APPROVALS_CHANNEL, INCIDENT_CHANNEL, TICKETS_CHANNEL } from './channels'
import { reply } from '../fakes/fake-openai'
import { signedSlackRequest, slashCommandBody } from '../fakes/fake-slack'
import {
  APPROVER,
  BASE,
  CHANNEL,
  SIGNING_SECRET,
  SlackWorld,
  blockText,
  messageTs,
  uniqueId,
} from '../slack-e2e/harness'
// An operator's token: the full readiness report needs service:read (the legacy token has it).
const AUTH = { authorization: 'Bearer test-token' }
import { fetchWith } from '../service/worker-with'

let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

const POST_ARGS = { url: 'https://receiver.test/incidents/42', body: { status: 'mitigated' } }
const TICKET = { title: 'Export to CSV times out', priority: 'p2' }

/** The system prompt of the model's nth request (from 0). */
const systemPrompt = (n = 0) => world.model.bodies[n]!.messages[0]!.content as string

describe('an agent that names channels', () => {
  it('answers a mention there: its prompt, its tools, and an approval card naming it', async () => {
    world.model.enqueue(
      reply.toolCalls([{ name: 'http_post', arguments: POST_ARGS }], { content: 'Record it.' }),
      reply.text('Recorded: the incident is mitigated.'),
    )
    const ack = await world.mention({
      text: '<@UFAKEBOT> the checkout incident is mitigated, record it',
      channel: INCIDENT_CHANNEL,
      ts: messageTs(),
      event_id: uniqueId('Ev'),
    })
    expect(ack.created).toBe(true)
    await world.settle(ack.runId!)
    const view = await world.view(ack.runId!)
    expect(view).toMatchObject({ status: 'awaiting_approval', agent: { name: 'incident' } })
    // Its instructions (a Markdown file of the test catalog) first, byte for byte.
    expect(systemPrompt().startsWith(`${incidentInstructions.trimEnd()}\n\nYou are an agent`)).toBe(
      true,
    )
    const offered = world.model.bodies[0]!.tools!.map((t) => t.function.name).toSorted()
    expect(offered).toEqual(['calculator', 'http_post', 'read_observation'])

    const card = world.approvalMessage(INCIDENT_CHANNEL)
    expect(blockText(card)).toContain('*Agent:* `incident`')
    expect((await world.click(card, 'approve', APPROVER)).status).toBe(200)
    await world.settle(ack.runId!)
    expect(world.received.map((r) => r.url)).toEqual([POST_ARGS.url])
    expect(await world.view(ack.runId!)).toMatchObject({ status: 'succeeded' })
    const texts = world.messages(INCIDENT_CHANNEL).map((m) => m.text ?? '')
    expect(texts.at(-1)).toContain('Recorded: the incident is mitigated.')
  })

  it('answers a slash command there with a structured answer, posted compact', async () => {
    world.model.enqueue(reply.toolCalls([{ name: 'final_answer', arguments: { answer: TICKET } }]))
    const { runId } = await world.command('CSV export times out for big accounts', {
      channel_id: TICKETS_CHANNEL,
    })
    await world.settle(runId)
    const view = await world.view(runId)
    expect(view).toMatchObject({ status: 'succeeded', agent: { name: 'ticket' } })
    expect(view.result!.output).toEqual(TICKET)
    expect(systemPrompt()).toMatch(/^You turn a request into a ticket/)
    const last = world.messages(TICKETS_CHANNEL).at(-1)!
    expect(last.text).toBe('*title:* Export to CSV times out\n*priority:* p2\n_Done in 1 step._')
  })

  it('a channel no agent names gets the default agent', async () => {
    world.model.enqueue(reply.text('Looked.'))
    const { runId } = await world.command('look at the queue')
    await world.settle(runId)
    expect(await world.view(runId)).toMatchObject({ agent: { name: 'default' } })
    expect(systemPrompt()).toMatch(/^You are an agent that solves the task/)
  })
})

describe('/edgeloop <agent>: <task>', () => {
  it('picks the agent in a channel no agent names', async () => {
    world.model.enqueue(reply.toolCalls([{ name: 'final_answer', arguments: { answer: TICKET } }]))
    const { runId } = await world.command('ticket: CSV export times out', { command: '/edgeloop' })
    await world.settle(runId)
    expect(await world.view(runId)).toMatchObject({
      task: 'CSV export times out',
      agent: { name: 'ticket' },
      status: 'succeeded',
    })
    expect(world.messages(CHANNEL).at(-1)!.text).toContain('*priority:* p2')
  })

  it('an explicit agent wins over the channel’s', async () => {
    world.model.enqueue(
      reply.toolCalls([
        {
          name: 'final_answer',
          arguments: { answer: { severity: 'sev2', component: 'db', summary: 'Slow queries.' } },
        },
      ]),
    )
    const { runId } = await world.command('triage: queries are slow', {
      channel_id: INCIDENT_CHANNEL,
    })
    await world.settle(runId)
    expect(await world.view(runId)).toMatchObject({ agent: { name: 'triage' } })
    expect(world.messages(INCIDENT_CHANNEL).at(-1)!.text).toBe(
      '*severity:* sev2\n*component:* db\n*summary:* Slow queries.\n_Done in 1 step._',
    )
  })

  it('an app still registered with /agent works the same', async () => {
    world.model.enqueue(reply.text('Fine.'))
    const { runId } = await world.command('incident: status?', { command: '/agent' })
    await world.settle(runId)
    expect(await world.view(runId)).toMatchObject({ task: 'status?', agent: { name: 'incident' } })
  })

  it('the usage hint names the command it was called as', async () => {
    for (const command of ['/edgeloop', '/agent']) {
      const res = await world.post(
        '/slack/commands',
        new URLSearchParams({
          command,
          text: ' ',
          team_id: 'T0001',
          channel_id: CHANNEL,
          user_id: 'U2147483697',
          trigger_id: uniqueId('1.'),
          response_url: 'https://hooks.slack.test/commands/1/2',
        }).toString(),
      )
      expect(((await res.json()) as { text: string }).text).toContain(
        `Usage: ${command} <task> or ${command} <agent>: <task>`,
      )
    }
  })
})

describe('channel rules are configuration', () => {
  type Problem = { variable: string; agent: string; field: string; message: string }
  const problemsOf = async (enabled: string, path: string) => {
    const res = await fetchWith({ ENABLED_AGENTS: enabled }, path, { headers: AUTH })
    expect(res.status).toBe(503)
    const body = (await res.json()) as { error: { code: string; details: { problems: Problem[] } } }
    expect(body.error.code).toBe('misconfigured')
    return body.error.details.problems
  }

  it.each(['/readyz', '/healthz?deep=1'])(
    '%s: two agents claiming one channel, a #name for a channel: 503 naming agent and field',
    async (path) => {
      expect(await problemsOf('incident,ticket,clash,by-name', path)).toEqual([
        {
          variable: 'agents/by-name.ts',
          agent: 'by-name',
          field: 'slack.channels',
          message: expect.stringContaining('#incidents are not Slack channel ids'),
        },
        {
          variable: 'agents/clash.ts',
          agent: 'clash',
          field: 'slack.channels',
          message: expect.stringContaining(
            `channel ${INCIDENT_CHANNEL} is already the channel of agent "incident"`,
          ),
        },
      ])
    },
  )

  it('meanwhile a slash command starts nothing: 503 misconfigured', async () => {
    const signed = await signedSlackRequest({
      url: `${BASE}/slack/commands`,
      secret: SIGNING_SECRET,
      body: slashCommandBody({ text: 'incident: status?', trigger_id: uniqueId('1.') }),
      timestamp: Math.floor(Date.now() / 1000),
    })
    const res = await fetchWith({ ENABLED_AGENTS: 'incident,clash' }, '/slack/commands', {
      method: 'POST',
      headers: signed.headers,
      body: await signed.text(),
    })
    expect(res.status).toBe(503)
    expect(await res.json()).toMatchObject({
      error: { code: 'misconfigured', message: expect.stringContaining('agent "clash"') },
    })
    expect(world.model.bodies).toHaveLength(0)
  })
})

describe("an agent's approvals channel (slack.approvals)", () => {
  /** `POST /v1/runs` with the operator's token. */
  async function startByApi(body: Record<string, unknown>): Promise<string> {
    const res = await worker.fetch(
      new Request(`${BASE}/v1/runs`, {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }) as Request<unknown, IncomingRequestCfProperties>,
      env as Env,
      createExecutionContext(),
    )
    expect(res.status).toBe(202)
    return ((await res.json()) as { id: string }).id
  }

  it('a run of the API posts its card there, alone, and a click there decides it', async () => {
    world.model.enqueue(
      reply.toolCalls([{ name: 'http_post', arguments: POST_ARGS }], { content: 'Record it.' }),
      reply.text('Recorded.'),
    )
    const runId = await startByApi({ task: 'Record the incident as mitigated', agent: 'incident' })
    await world.settle(runId)
    expect(await world.view(runId)).toMatchObject({
      status: 'awaiting_approval',
      slack: { channel: INCIDENT_APPROVALS_CHANNEL },
    })
    // Only the card: no "working on it", no thread, nothing in the agent's own channel.
    const posted = world.messages(INCIDENT_APPROVALS_CHANNEL)
    expect(posted).toHaveLength(1)
    expect(posted[0]!.thread_ts).toBeUndefined()
    expect(world.messages(INCIDENT_CHANNEL)).toEqual([])
    const card = world.approvalMessage(INCIDENT_APPROVALS_CHANNEL)
    expect(blockText(card)).toContain('*Agent:* `incident`')

    // The same button from another channel (a copied value) decides nothing.
    await world.click(card, 'approve', APPROVER, { channel: INCIDENT_CHANNEL })
    await world.settle(runId)
    expect((await world.view(runId)).status).toBe('awaiting_approval')
    expect(world.slack.ephemerals().at(-1)?.text).toContain('answers in another channel')

    expect((await world.click(card, 'approve', APPROVER)).status).toBe(200)
    await world.settle(runId)
    expect(world.received.map((r) => r.url)).toEqual([POST_ARGS.url])
    const view = await world.deliverAll(runId)
    expect(view).toMatchObject({ status: 'succeeded', result: { answer: 'Recorded.' } })
    // The card now says who decided; the answer is the API's, not posted in Slack.
    expect(world.messages(INCIDENT_APPROVALS_CHANNEL)).toHaveLength(1)
    expect(world.slack.updatesOf(card.ts)).toHaveLength(1)
  })

  it('an agent without one, and no SLACK_APPROVALS_CHANNEL: nothing is posted', async () => {
    world.model.enqueue(reply.toolCalls([{ name: 'http_post', arguments: POST_ARGS }]))
    const runId = await startByApi({ task: 'Post it', tools: ['http_post'] })
    await world.settle(runId)
    const view = await world.view(runId)
    expect(view.status).toBe('awaiting_approval')
    expect(view.slack).toBeUndefined()
    expect(world.slack.succeeded('chat.postMessage')).toEqual([])
  })
})
