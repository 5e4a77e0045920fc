/**
 * Conversations end to end through the Worker's fetch, the real `openai` client
 * and the fake provider: `POST /v1/runs` with `continue`, what the model is sent, the view and
 * trace, the 4xx cases, the history limit, read_observation across the conversation, approvals
 * per run, and a resumed follow-up keeping its prompt prefix.
 */
import { evictDurableObject } from 'cloudflare:test'
import { exports } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { EdgeloopClient } from '../../src/client'
import { reply, type ReceivedBody } from '../fakes/fake-openai'
import {
  api,
  API_TOKEN,
  AUTH,
  decide,
  drainAlarms,
  getRun,
  getTrace,
  hmacHex,
  ORIGIN,
  postJson,
  RECEIVER,
  runAlarm,
  startRun,
  stubOf,
  useServiceFakes,
  WEBHOOK_SECRET,
} from './harness'
import { saved, watchRun } from './run-watch'

const MARKER = 'GATEWAY-STATUS-MARKER-7731'
const PAGE = `status: degraded\n${MARKER}\n${'log line\n'.repeat(20)}`

const fakes = useServiceFakes({
  hosts: () => ({
    'api.allowed.test': () => new Response(PAGE, { headers: { 'content-type': 'text/plain' } }),
  }),
})

const getCall = (id = 'call_get') => ({
  id,
  name: 'http_get',
  arguments: { url: 'https://api.allowed.test/gateway' },
})

/** A run that reads the gateway page and answers; returns its id once finished. */
async function finishedRun(task = 'Why is the gateway slow?', answer = 'The gateway is degraded.') {
  fakes.ai.enqueue(reply.toolCalls([getCall()]), reply.text(answer))
  const id = await startRun({ task, tools: ['http_get'] })
  await drainAlarms(id)
  expect((await getRun(id)).status).toBe('succeeded')
  return id
}

/** Starts a follow-up (asserts the 202) and returns the POST's body. */
async function continueRun(body: Record<string, unknown>) {
  const res = await postJson('/v1/runs', body)
  const json = (await res.json()) as {
    id: string
    conversation: { id: string; position: number; previousRunId: string | null }
  }
  expect(res.status, JSON.stringify(json)).toBe(202)
  return json
}

/** The messages of a request before its task: the system prompt and the history. */
function historyOf(body: ReceivedBody): string {
  const messages = body.messages
  const task = messages.findIndex((m) => m.role === 'user' && /^Task: /.test(m.content))
  expect(task).toBe(2)
  expect(messages[0]!.role).toBe('system')
  expect(messages[1]!.role).toBe('user')
  return messages[1]!.content as string
}

async function errorOf(res: Response) {
  return ((await res.json()) as { error: { code: string; message: string } }).error
}

describe('POST /v1/runs with continue', () => {
  it('starts the follow-up with the earlier turn: task, tools with arguments, answer — no observations', async () => {
    const first = await finishedRun()
    const before = fakes.ai.bodies.length
    fakes.ai.enqueue(reply.text('The gateway too: degraded since 09:00.'))
    const created = await continueRun({
      task: 'And the gateway too?',
      tools: ['http_get'],
      continue: first,
    })
    expect(created.conversation).toEqual({ id: first, position: 1, previousRunId: first })
    await drainAlarms(created.id)

    const sent = fakes.ai.bodies[before]!
    const history = historyOf(sent)
    expect(history).toBe(
      [
        'Earlier in this conversation (oldest first). Tool observations are not repeated here: read one with read_observation and the handle shown.',
        [
          `Turn 1 (run ${first})`,
          'Task: Why is the gateway slow?',
          'Tools called:',
          `- http_get {"url":"https://api.allowed.test/gateway"} → read_observation handle "${first}/obs_call_get"`,
          'Answer: The gateway is degraded.',
        ].join('\n'),
      ].join('\n\n'),
    )
    expect(JSON.stringify(sent.messages)).not.toContain(MARKER)
    expect(sent.messages[2]).toEqual({ role: 'user', content: 'Task: And the gateway too?' })

    const view = await getRun(created.id)
    expect(view).toMatchObject({ status: 'succeeded', task: 'And the gateway too?' })
    expect(view.conversation).toEqual({
      id: first,
      position: 1,
      previousRunId: first,
      historyTurns: 1,
      droppedTurns: 0,
    })
    expect((await getTrace(created.id)).conversation).toEqual(view.conversation)
    // The run that started the conversation is position 0 of its own conversation.
    expect((await getRun(first)).conversation).toEqual({
      id: first,
      position: 0,
      previousRunId: null,
      historyTurns: 0,
      droppedTurns: 0,
    })
  })

  it('walks a longer conversation: every earlier turn, oldest first, and how a failed run ended', async () => {
    const first = await finishedRun()
    // The second run fails: the model replies with nothing usable, three times.
    fakes.ai.enqueue(reply.text(''), reply.text(''), reply.text(''))
    const second = await continueRun({ task: 'Check the queue.', continue: first })
    await drainAlarms(second.id)
    const failed = await getRun(second.id)
    expect(failed).toMatchObject({ status: 'failed' })
    expect(failed.result.stopReason).toBe('unparsable_exhausted')

    const before = fakes.ai.bodies.length
    fakes.ai.enqueue(reply.text('Done.'))
    const third = await continueRun({ task: 'Try the queue again.', continue: second.id })
    expect(third.conversation).toEqual({ id: first, position: 2, previousRunId: second.id })
    await drainAlarms(third.id)
    const history = historyOf(fakes.ai.bodies[before]!)
    const turn1 = history.indexOf(`Turn 1 (run ${first})`)
    const turn2 = history.indexOf(`Turn 2 (run ${second.id})`)
    expect(turn1).toBeGreaterThan(0)
    expect(turn2).toBeGreaterThan(turn1)
    expect(history).toContain(
      'Task: Check the queue.\nTools called: none\nFailed (unparsable_exhausted): ',
    )
    expect((await getRun(third.id)).conversation).toMatchObject({ position: 2, historyTurns: 2 })
  })

  it('refuses a bad id (400), an unknown run (404) and a run still going (409)', async () => {
    const bad = await postJson('/v1/runs', { task: 'x', continue: 'not-a-run' })
    expect(bad.status).toBe(400)
    expect(await errorOf(bad)).toMatchObject({ code: 'invalid_run_id' })

    const unknown = `run_${'0'.repeat(32)}`
    const missing = await postJson('/v1/runs', { task: 'x', continue: unknown })
    expect(missing.status).toBe(404)
    expect(await errorOf(missing)).toMatchObject({ code: 'run_not_found' })

    // Running: started, no alarm run yet.
    const running = await startRun({ task: 'Still going', tools: ['calculator'] })
    const busy = await postJson('/v1/runs', { task: 'x', continue: running })
    expect(busy.status).toBe(409)
    const error = await errorOf(busy)
    expect(error).toMatchObject({ code: 'run_not_finished' })
    expect(error.message).toContain('is running')

    // Awaiting a person's approval.
    fakes.ai.enqueue(
      reply.toolCalls([
        {
          id: 'call_post',
          name: 'http_post',
          arguments: { url: `https://${RECEIVER}/x`, body: {} },
        },
      ]),
    )
    const waiting = await startRun({ task: 'Post', tools: ['http_post'] })
    await drainAlarms(waiting)
    const asked = await postJson('/v1/runs', { task: 'x', continue: waiting })
    expect(asked.status).toBe(409)
    expect(await asked.json()).toMatchObject({
      error: { code: 'run_not_finished', details: { status: 'awaiting_approval' } },
    })
    // Nothing was started by the refused requests: the model saw only the waiting run.
    expect(fakes.ai.bodies).toHaveLength(1)
    // The running run has not moved either; it is drained so the test leaves nothing pending.
    fakes.ai.enqueue(reply.text('ok'))
    await drainAlarms(running)
  })

  it('continuing needs runs:read: a webhook signature and a bad history limit are refused', async () => {
    const first = await finishedRun()
    const body = JSON.stringify({ task: 'Follow up', continue: first })
    const ts = Math.floor(Date.now() / 1000)
    const signed = await api('/v1/runs', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'X-Edgeloop-Timestamp': String(ts),
        'X-Edgeloop-Signature': `v1=${await hmacHex(WEBHOOK_SECRET, `${ts}.${body}`)}`,
      },
      body,
    })
    expect(signed.status).toBe(403)
    expect(await errorOf(signed)).toMatchObject({ code: 'forbidden' })

    const small = await postJson('/v1/runs', {
      task: 'x',
      continue: first,
      budget: { maxHistoryTokens: 10 },
    })
    expect(small.status).toBe(400)
    const over = await postJson('/v1/runs', {
      task: 'x',
      continue: first,
      budget: { maxHistoryTokens: 50_000 },
    })
    expect(over.status).toBe(400)
    expect(await errorOf(over)).toMatchObject({ code: 'budget_over_maximum' })
  })
})

describe('the history limit', () => {
  it('drops the oldest turns first and says how many', async () => {
    // Three finished runs of one conversation, each turn about 500 tokens (a 2000-character task).
    const long = (n: number) => `Question ${n}: ${'why '.repeat(500)}`.slice(0, 1990)
    fakes.ai.enqueue(reply.text('Answer 1.'))
    let last = await startRun({ task: long(1), tools: ['calculator'] })
    await drainAlarms(last)
    for (const n of [2, 3]) {
      fakes.ai.enqueue(reply.text(`Answer ${n}.`))
      last = (await continueRun({ task: long(n), tools: ['calculator'], continue: last })).id
      await drainAlarms(last)
    }
    const before = fakes.ai.bodies.length
    fakes.ai.enqueue(reply.text('Answer 4.'))
    const fourth = await continueRun({
      task: long(4),
      tools: ['calculator'],
      continue: last,
      budget: { maxHistoryTokens: 1200 },
    })
    await drainAlarms(fourth.id)

    const history = historyOf(fakes.ai.bodies[before]!)
    expect(history).toContain('[1 earlier turn left out to fit the history limit]')
    expect(history).not.toContain('Question 1:')
    expect(history).toContain('Question 2:')
    expect(history).toContain('Question 3:')
    expect(history.indexOf('Question 2:')).toBeLessThan(history.indexOf('Question 3:'))
    // About 4 characters a token: the message stays within the limit.
    expect(Math.ceil(history.length / 4)).toBeLessThanOrEqual(1200)
    expect((await getRun(fourth.id)).conversation).toMatchObject({
      position: 3,
      historyTurns: 2,
      droppedTurns: 1,
    })

    // The history takes at most half the context cap: 1200 asked, 1000 of a 2000 cap given,
    // so only the newest turn fits.
    const halfBefore = fakes.ai.bodies.length
    fakes.ai.enqueue(reply.text('Answer 4b.'))
    const capped = await continueRun({
      task: 'Capped',
      tools: ['calculator'],
      continue: last,
      budget: { maxHistoryTokens: 1200, maxContextTokens: 2000 },
    })
    await drainAlarms(capped.id)
    const cappedHistory = historyOf(fakes.ai.bodies[halfBefore]!)
    expect(cappedHistory).toContain('[2 earlier turns left out to fit the history limit]')
    expect(Math.ceil(cappedHistory.length / 4)).toBeLessThanOrEqual(1000)

    // With the smallest limit only the stub is left (no ~500-token turn fits): all dropped.
    const stubBefore = fakes.ai.bodies.length
    fakes.ai.enqueue(reply.text('Answer 5.'))
    const fifth = await continueRun({
      task: 'Anything?',
      tools: ['calculator'],
      continue: fourth.id,
      budget: { maxHistoryTokens: 200 },
    })
    await drainAlarms(fifth.id)
    expect(historyOf(fakes.ai.bodies[stubBefore]!)).toContain(
      '[4 earlier turns left out to fit the history limit]',
    )
  })
})

describe('read_observation across the conversation', () => {
  it('reads an earlier run’s observation by the handle its turn names; another conversation cannot', async () => {
    const first = await finishedRun()
    const handle = `${first}/obs_call_get`
    fakes.ai.enqueue(
      reply.toolCalls([
        { id: 'call_read', name: 'read_observation', arguments: { handle, offset: 0 } },
      ]),
      reply.text('Read it.'),
    )
    const follow = await continueRun({
      task: 'Show the page',
      tools: ['http_get'],
      continue: first,
    })
    await drainAlarms(follow.id)
    const read = (await getTrace(follow.id)).steps[0]!.calls[0]!
    expect(read).toMatchObject({ name: 'read_observation', kind: 'ok' })
    expect(read.observation).toContain(MARKER)

    // A run of another conversation asks for the same handle: it does not exist for it.
    const other = await finishedRun('Another question', 'Another answer.')
    fakes.ai.enqueue(
      reply.toolCalls([
        { id: 'call_read', name: 'read_observation', arguments: { handle, offset: 0 } },
      ]),
      reply.text('Could not read it.'),
    )
    const stranger = await continueRun({ task: 'Peek', tools: ['http_get'], continue: other })
    await drainAlarms(stranger.id)
    const refused = (await getTrace(stranger.id)).steps[0]!.calls[0]!
    expect(refused.kind).toBe('tool_error')
    expect(refused.observation).toContain(`no stored observation with handle "${handle}"`)
    expect(refused.observation).not.toContain(MARKER)
    // A fresh run (no conversation) cannot either.
    fakes.ai.enqueue(
      reply.toolCalls([
        { id: 'call_read', name: 'read_observation', arguments: { handle, offset: 0 } },
      ]),
      reply.text('No.'),
    )
    const fresh = await startRun({ task: 'Peek', tools: ['http_get'] })
    await drainAlarms(fresh)
    expect((await getTrace(fresh)).steps[0]!.calls[0]!.kind).toBe('tool_error')
  })
})

describe('approvals stay per run', () => {
  it('a follow-up calling the same side effect with the same arguments is asked again', async () => {
    const post = {
      id: 'call_post',
      name: 'http_post',
      arguments: { url: `https://${RECEIVER}/deploys`, body: { service: 'gateway' } },
    }
    fakes.ai.enqueue(reply.toolCalls([post]), reply.text('Rolled back.'))
    const first = await startRun({ task: 'Roll back the gateway', tools: ['http_post'] })
    await drainAlarms(first)
    const pending = (await getRun(first)).pendingApprovals[0]!
    expect(
      (await decide(first, 'call_post', { decision: 'approve', args_hash: pending.argsHash }))
        .status,
    ).toBe(200)
    await drainAlarms(first)
    expect((await getRun(first)).status).toBe('succeeded')
    expect(fakes.receiver.hits).toHaveLength(1)

    fakes.ai.enqueue(reply.toolCalls([post]))
    const follow = await continueRun({
      task: 'Do it again',
      tools: ['http_post'],
      continue: first,
    })
    await drainAlarms(follow.id)
    const view = await getRun(follow.id)
    expect(view.status).toBe('awaiting_approval')
    expect(view.pendingApprovals).toHaveLength(1)
    expect(view.pendingApprovals[0]).toMatchObject({
      callId: 'call_post',
      tool: 'http_post',
      argsHash: pending.argsHash,
    })
    // Nothing ran without the new approval.
    expect(fakes.receiver.hits).toHaveLength(1)
    // The earlier approval is not usable on the follow-up's own call either: deny it to finish.
    fakes.ai.enqueue(reply.text('Not rolled back.'))
    await decide(follow.id, 'call_post', { decision: 'deny', args_hash: pending.argsHash })
    await drainAlarms(follow.id)
    expect(fakes.receiver.hits).toHaveLength(1)
  })
})

describe('a resumed follow-up', () => {
  it('sends the same history prefix after its object restarts', async () => {
    const first = await finishedRun()
    const before = fakes.ai.bodies.length
    fakes.ai.enqueue(reply.toolCalls([getCall('call_again')]), reply.text('Still degraded.'))
    const follow = await continueRun({ task: 'Check again', tools: ['http_get'], continue: first })
    // The first alarm thinks and acts, and its slice ends there (the clock passes the slice's
    // wall budget); then the object dies and a fresh one resumes the run from storage.
    const watch = await watchRun(follow.id)
    const cut = watch.once(saved.ranCall('http_get'), () => fakes.clock.advance(10 * 60_000))
    await runAlarm(follow.id)
    expect(cut.fired()).toBe(true)
    expect(fakes.ai.bodies.length - before).toBe(1)
    await evictDurableObject(stubOf(follow.id))
    await drainAlarms(follow.id)
    expect((await getRun(follow.id)).status).toBe('succeeded')
    const [a, b] = fakes.ai.bodies.slice(before)
    expect(b, 'the run made a second model call').toBeDefined()
    expect(JSON.stringify(b!.messages.slice(0, 3))).toBe(JSON.stringify(a!.messages.slice(0, 3)))
    expect(historyOf(a!)).toContain(`Turn 1 (run ${first})`)
  })
})

describe('the typed client', () => {
  it('startRun accepts continue and answers with the conversation', async () => {
    const client = new EdgeloopClient({
      baseUrl: ORIGIN,
      token: API_TOKEN,
      fetch: (request) => exports.default.fetch(request),
    })
    const first = await finishedRun()
    fakes.ai.enqueue(reply.text('Also degraded.'))
    const next = await client.startRun({
      task: 'And checkout?',
      tools: ['http_get'],
      continue: first,
    })
    expect(next.conversation).toEqual({ id: first, position: 1, previousRunId: first })
    await drainAlarms(next.id)
    const view = await client.getRun(next.id)
    expect(view.conversation).toMatchObject({ id: first, position: 1, historyTurns: 1 })
    await expect(
      client.startRun({ task: 'x', continue: `run_${'f'.repeat(32)}` }),
    ).rejects.toMatchObject({ status: 404, code: 'run_not_found' })
  })
})

describe('GET /v1/runs?conversation=', () => {
  it('lists the runs of one conversation, newest first, with their positions', async () => {
    const first = await finishedRun()
    fakes.clock.advance(1_000)
    fakes.ai.enqueue(reply.text('Second.'))
    const second = await continueRun({ task: 'Second', tools: ['http_get'], continue: first })
    await drainAlarms(second.id)
    fakes.clock.advance(1_000)
    fakes.ai.enqueue(reply.text('Third.'))
    const third = await continueRun({ task: 'Third', tools: ['http_get'], continue: second.id })
    await drainAlarms(third.id)
    const unrelated = await finishedRun('Unrelated', 'Unrelated.')

    const res = await api(`/v1/runs?conversation=${first}`, { headers: AUTH })
    expect(res.status).toBe(200)
    const page = (await res.json()) as {
      items: { id: string; conversation: { id: string; position: number } }[]
    }
    expect(page.items.map((r) => [r.id, r.conversation])).toEqual([
      [third.id, { id: first, position: 2 }],
      [second.id, { id: first, position: 1 }],
      [first, { id: first, position: 0 }],
    ])
    const other = await api(`/v1/runs?conversation=${unrelated}`, { headers: AUTH })
    expect(((await other.json()) as { items: { id: string }[] }).items.map((r) => r.id)).toEqual([
      unrelated,
    ])
    const bad = await api('/v1/runs?conversation=nope', { headers: AUTH })
    expect(bad.status).toBe(400)
    expect(await errorOf(bad)).toMatchObject({ code: 'invalid_query' })
  })
})
