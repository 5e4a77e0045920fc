/**
 * A server's question during a call in a run, through the Worker (docs/mcp.md#questions-from-servers):
 * the run holds a `question` item with the server's schema while the request stays open, a person
 * answers it through the API, the answer (with the schema's defaults) goes to the server and the
 * call's result reaches the model. The fake (test/fakes/fake-mcp.ts, answers as streams) asks in
 * `search_section` (read-only), `publish_page` (a side effect) and `open_consent` (URL mode).
 */
import { abortAllDurableObjects } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  CHANNEL_SCHEMA,
  CONSENT_URL,
  FakeMcp,
  SECTION_SCHEMA,
  mcpTestHosts,
} from '../fakes/fake-mcp'
import {
  AUTH,
  api,
  decide,
  drainAlarms,
  getRun,
  getTrace,
  postJson,
  startRun,
  useServiceFakes,
} from '../service/harness'

let mcp: FakeMcp
const fakes = useServiceFakes({
  hosts: () =>
    mcpTestHosts((m) => {
      mcp = m
      mcp.streams = true
    }),
})

const answer = (id: string, body: unknown) => postJson(`/v1/runs/${id}/questions/c1`, body)

/** Starts a run whose model calls `tool` with `args` once, then finishes; runs it until it waits. */
async function runCalling(tool: string, args: Record<string, unknown>): Promise<string> {
  fakes.ai.enqueue(
    reply.toolCalls([{ id: 'c1', name: `docs__${tool}`, arguments: args }]),
    reply.text('Done.'),
  )
  const id = await startRun({ task: `Use ${tool}`, tools: [`docs__${tool}`] })
  await drainAlarms(id)
  return id
}

/** The run's one pending item (asserts there is exactly one). */
async function pendingItem(id: string) {
  const view = await getRun(id)
  expect(view.status).toBe('awaiting_approval')
  expect(view.pendingApprovals).toHaveLength(1)
  return view.pendingApprovals[0]!
}

/** Approves the side effect `c1`, and lets the run go on until it waits again. */
async function approve(id: string): Promise<void> {
  const item = await pendingItem(id)
  expect(item.kind ?? 'approval').toBe('approval')
  const res = await decide(id, 'c1', { decision: 'approve', args_hash: item.argsHash })
  expect(res.status).toBe(200)
  await drainAlarms(id)
}

async function observation(id: string): Promise<string> {
  return (await getTrace(id)).steps[0]!.calls[0]!.observation!
}

const callsOf = (tool: string) => mcp.calls.filter((c) => c.tool === tool)

describe('a server’s question in a run', () => {
  it('is held as a question item with the server’s schema; the answer, with defaults, reaches the server', async () => {
    const id = await runCalling('search_section', { query: 'alarms' })
    const item = await pendingItem(id)
    expect(item).toMatchObject({
      callId: 'c1',
      tool: 'docs__search_section',
      kind: 'question',
      ask: {
        message: 'The docs MCP server asks: Which section should "alarms" be searched in?',
        schema: SECTION_SCHEMA,
        choices: null,
        details: { mcp: { server: 'docs', mode: 'form' } },
      },
      actions: ['answer', 'decline'],
      href: `/v1/runs/${id}/questions/c1`,
    })
    // The request is held open: the server has its question and no answer yet.
    expect(mcp.elicitAnswers).toEqual([])
    const inbox = (await (await api('/v1/inbox', { headers: AUTH })).json()) as {
      items: { runId: string; kind: string }[]
    }
    expect(inbox.items.find((i) => i.runId === id)?.kind).toBe('question')

    const res = await answer(id, { question_hash: item.argsHash, answer: { section: 'faq' } })
    expect(res.status).toBe(200)
    await drainAlarms(id)

    expect(mcp.elicitAnswers).toEqual([
      { action: 'accept', content: { section: 'faq', limit: 10 } },
    ])
    expect(callsOf('search_section')).toHaveLength(1)
    expect(await observation(id)).toBe('searched {"section":"faq","limit":10} for "alarms"')
    const trace = await getTrace(id)
    expect((await getRun(id)).status).toBe('succeeded')
    expect(trace.steps[0]!.calls[0]!.approval).toMatchObject({
      kind: 'question',
      decision: 'approved',
      answer: { section: 'faq' },
    })
  })

  it('of an approved side effect: the call is sent once, and goes on with the answer', async () => {
    const id = await runCalling('publish_page', { page: 'intro' })
    await approve(id)
    const item = await pendingItem(id)
    expect(item).toMatchObject({ kind: 'question', ask: { schema: CHANNEL_SCHEMA } })
    expect(mcp.published).toEqual([])

    const res = await answer(id, { question_hash: item.argsHash, answer: { channel: 'blog' } })
    expect(res.status).toBe(200)
    await drainAlarms(id)

    expect(callsOf('publish_page')).toHaveLength(1)
    expect(mcp.published).toEqual([{ page: 'intro', channel: 'blog', notify: false }])
    expect(await observation(id)).toBe('published intro to blog')
    expect((await getRun(id)).status).toBe('succeeded')
  })

  it('a second question in the same call waits on a new item, and the call goes on once', async () => {
    const id = await runCalling('publish_page', { page: 'intro' })
    await approve(id)
    const first = await pendingItem(id)
    const res1 = await answer(id, {
      question_hash: first.argsHash,
      answer: { channel: 'changelog', notify: true },
    })
    expect(res1.status).toBe(200)
    await drainAlarms(id)

    const second = await pendingItem(id)
    expect(second.ask).toMatchObject({ message: 'The docs MCP server asks: Notify which list?' })
    expect(second.argsHash).not.toBe(first.argsHash)
    expect(mcp.published).toEqual([])
    const res2 = await answer(id, { question_hash: second.argsHash, answer: { list: 'all' } })
    expect(res2.status).toBe(200)
    await drainAlarms(id)

    expect(callsOf('publish_page')).toHaveLength(1)
    expect(mcp.published).toEqual([
      { page: 'intro', channel: 'changelog', notify: true, list: { list: 'all' } },
    ])
    expect(await observation(id)).toBe('published intro to changelog')
  })

  it('declined: the server is sent `decline`, and the model reads that nobody answered', async () => {
    const id = await runCalling('search_section', { query: 'alarms' })
    const item = await pendingItem(id)
    const res = await answer(id, { question_hash: item.argsHash, decline: true, reason: 'not now' })
    expect(res.status).toBe(200)
    await drainAlarms(id)

    expect(mcp.elicitAnswers).toEqual([{ action: 'decline' }])
    expect(await observation(id)).toMatch(
      /^\[NoAnswer\] The question was not answered: .* declined/,
    )
    expect((await getRun(id)).status).toBe('succeeded')
  })

  it('expired with nobody answering: the server is sent `cancel`', async () => {
    const id = await runCalling('search_section', { query: 'alarms' })
    await pendingItem(id)
    fakes.clock.advance(24 * 3_600_000 + 1)
    await drainAlarms(id)

    expect(mcp.elicitAnswers).toEqual([{ action: 'cancel' }])
    expect(await observation(id)).toContain('nobody answered before the question expired')
    expect((await getRun(id)).status).toBe('succeeded')
  })

  it('the run cancelled while the question waits: the server is sent `cancel`', async () => {
    const id = await runCalling('publish_page', { page: 'intro' })
    await approve(id)
    await pendingItem(id)
    const res = await postJson(`/v1/runs/${id}/cancel`, {})
    expect(res.status).toBe(202)
    await drainAlarms(id)

    expect(mcp.elicitAnswers).toEqual([{ action: 'cancel' }])
    expect(mcp.published).toEqual([])
    expect((await getRun(id)).status).toBe('failed')
  })

  it('an answer that fails the schema is a 400 naming the field; the question stays, then is answered', async () => {
    const id = await runCalling('search_section', { query: 'alarms' })
    const item = await pendingItem(id)
    for (const bad of [{ section: 'blog' }, { limit: 500 }, 'faq']) {
      const res = await answer(id, { question_hash: item.argsHash, answer: bad })
      expect(res.status).toBe(400)
      const body = (await res.json()) as { error: { code: string; message: string } }
      expect(body.error.code).toBe('invalid_answer')
      expect(body.error.message).toMatch(/section|limit|object/)
    }
    expect(await pendingItem(id)).toMatchObject({ kind: 'question', argsHash: item.argsHash })
    expect(mcp.elicitAnswers).toEqual([])

    const res = await answer(id, { question_hash: item.argsHash, answer: { section: 'guides' } })
    expect(res.status).toBe(200)
    await drainAlarms(id)
    expect(mcp.elicitAnswers).toEqual([
      { action: 'accept', content: { section: 'guides', limit: 10 } },
    ])
    expect((await getRun(id)).status).toBe('succeeded')
  })

  it('in URL mode: the item carries the server’s URL, and "done" is sent as accept', async () => {
    const id = await runCalling('open_consent', {})
    const item = await pendingItem(id)
    expect(item.ask).toMatchObject({
      choices: ['done'],
      details: { mcp: { server: 'docs', mode: 'url', url: CONSENT_URL, elicitationId: 'c-1' } },
    })
    expect(item.ask!.message).toContain(CONSENT_URL)
    const res = await answer(id, { question_hash: item.argsHash, answer: 'done' })
    expect(res.status).toBe(200)
    await drainAlarms(id)
    expect(mcp.elicitAnswers).toEqual([{ action: 'accept' }])
    expect(await observation(id)).toBe('consent: accept')
  })
})

describe('a server’s question held when the run’s object is reset (a crash)', () => {
  it('stays pending; a side effect is not sent again: its outcome is unknown', async () => {
    const id = await runCalling('publish_page', { page: 'intro' })
    await approve(id)
    const item = await pendingItem(id)
    await abortAllDurableObjects()
    // The item survived: it is in the run's stored state.
    expect(await pendingItem(id)).toMatchObject({ kind: 'question', argsHash: item.argsHash })

    const res = await answer(id, { question_hash: item.argsHash, answer: { channel: 'blog' } })
    expect(res.status).toBe(200)
    await drainAlarms(id)

    expect(callsOf('publish_page')).toHaveLength(1)
    expect(mcp.published).toEqual([])
    expect(await observation(id)).toMatch(/^\[ToolError\] outcome unknown: .* was not sent again/)
    expect((await getRun(id)).status).toBe('succeeded')
  })

  it('stays pending; a read-only call is sent again and its question answered at once', async () => {
    const id = await runCalling('search_section', { query: 'alarms' })
    const item = await pendingItem(id)
    await abortAllDurableObjects()
    expect(await pendingItem(id)).toMatchObject({ kind: 'question', argsHash: item.argsHash })

    const res = await answer(id, { question_hash: item.argsHash, answer: { section: 'faq' } })
    expect(res.status).toBe(200)
    await drainAlarms(id)

    expect(callsOf('search_section')).toHaveLength(2)
    expect(mcp.elicitAnswers).toEqual([
      { action: 'accept', content: { section: 'faq', limit: 10 } },
    ])
    expect(await observation(id)).toBe('searched {"section":"faq","limit":10} for "alarms"')
    expect((await getRun(id)).status).toBe('succeeded')
  })
})
