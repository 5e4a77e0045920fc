import { afterEach, describe, expect, it } from 'vitest'
import { dispatch, type DispatchContext } from '../../src/kernel/dispatch'
import { ToolRegistry } from '../../src/kernel/registry'
import { ConfigError } from '../../src/config'
import { buildToolset, CATALOG } from '../../tools'
import { createTicketTool, ticket } from '../../tools/examples/ticket'
import { Outbound } from '../fakes/outbound'

const args = { title: 'order 5xx after v2.14.0', body: 'db pool pinned at 10/10', severity: 'high' }

function context(overrides: Partial<DispatchContext> = {}): DispatchContext {
  const stored = new Map<string, string>()
  return {
    registry: new ToolRegistry([
      createTicketTool({ baseUrl: 'https://tickets.test/api', timeoutMs: 50 }),
    ]),
    runId: 'r1',
    observations: { put: (h, text) => void stored.set(h, text), get: (h) => stored.get(h) },
    policy: { mode: 'allow' },
    ...overrides,
  }
}

let outbound: Outbound
afterEach(() => outbound.restore())

describe('create_ticket', () => {
  it('creates the ticket with the call id as idempotency key', async () => {
    outbound = new Outbound()
      .on('tickets.test', () => Response.json({ id: 'T-42', url: 'https://tickets.test/T-42' }))
      .install()
    const observation = (await dispatch({ id: 'call_1', name: 'create_ticket', args }, context()))
      .observation
    expect(observation).toBe('created ticket T-42: https://tickets.test/T-42')
    expect(outbound.requests).toEqual([
      {
        method: 'POST',
        url: 'https://tickets.test/api/tickets',
        headers: expect.objectContaining({ 'idempotency-key': 'r1:call_1' }),
        body: JSON.stringify(args),
      },
    ])
  })

  it('sends the same key when a call is retried', async () => {
    outbound = new Outbound()
      .on('tickets.test', () => Response.json({ id: 'T-42', url: 'https://tickets.test/T-42' }))
      .install()
    await dispatch({ id: 'call_1', name: 'create_ticket', args }, context())
    await dispatch({ id: 'call_1', name: 'create_ticket', args }, context())
    expect(outbound.requests.map((r) => r.headers['idempotency-key'])).toEqual([
      'r1:call_1',
      'r1:call_1',
    ])
  })

  it('waits for a person under the "ask" policy', async () => {
    outbound = new Outbound()
      .on('tickets.test', () => Response.json({ id: 'T-43', url: 'https://tickets.test/T-43' }))
      .install()
    const call = { id: 'call_2', name: 'create_ticket', args }
    expect((await dispatch(call, context({ policy: { mode: 'ask' } }))).observation).toMatch(
      /^\[ToolError\] create_ticket has side effects and is not permitted here/,
    )
    expect(outbound.requests).toEqual([]) // nothing was sent

    const approved = context({ policy: { mode: 'ask' }, approved: true })
    expect((await dispatch(call, approved)).observation).toBe(
      'created ticket T-43: https://tickets.test/T-43',
    )
  })

  it('reports a failure of the ticket service', async () => {
    outbound = new Outbound()
      .on('tickets.test', () => new Response('queue is full', { status: 503 }))
      .install()
    expect(
      (await dispatch({ id: 'call_3', name: 'create_ticket', args }, context())).observation,
    ).toBe(
      '[ToolError] create_ticket failed: Error: the ticket service answered 503 (queue is full); ' +
        'the ticket was not created',
    )
  })

  it('gives up after its timeout, aborts the request and says the outcome is unknown', async () => {
    let request: Request | undefined
    outbound = new Outbound()
      .on('tickets.test', (req) => {
        request = req
        return new Promise<Response>(() => {}) // never answers
      })
      .install()
    // The request may have reached the tracker: the model is told not to retry blindly.
    expect(
      (await dispatch({ id: 'call_4', name: 'create_ticket', args }, context())).observation,
    ).toBe(
      '[ToolError] create_ticket timed out after 50ms; its outcome is unknown (it may have ' +
        'taken effect). Check its effect before retrying.',
    )
    expect(request?.signal.aborted).toBe(true)
  })

  it('rejects bad arguments before anything is sent', async () => {
    outbound = new Outbound().install()
    const bad = { ...args, severity: 'urgent' }
    expect(
      (await dispatch({ id: 'call_5', name: 'create_ticket', args: bad }, context())).observation,
    ).toContain('- severity: must be one of "low", "medium", "high"')
    expect(outbound.requests).toEqual([])
  })
})

it.each([
  ['tickets.test/api', 'is not an absolute URL'],
  ['ftp://tickets.test/', 'baseUrl must be http(s), got ftp:'],
])('refuses baseUrl %j when built', (baseUrl, message) => {
  expect(() => createTicketTool({ baseUrl })).toThrow(message)
})

describe('create_ticket in the catalog', () => {
  // The catalog with the tool's line added, as tools/catalog.ts has it once you add yours.
  const build = (env: Record<string, string>) =>
    buildToolset(['create_ticket'], env, [...CATALOG, ticket])

  it('is built from TICKETS_URL and TICKETS_TIMEOUT_MS', () => {
    const [tool] = build({ TICKETS_URL: 'https://tickets.test/api', TICKETS_TIMEOUT_MS: '2000' })
    expect(tool).toMatchObject({ name: 'create_ticket', sideEffect: true, timeoutMs: 2000 })
  })

  it.each([
    [{}, 'TICKETS_URL is required: the ticket service API, e.g. https://tickets.example.com/api'],
    [{ TICKETS_URL: 'tickets.test/api' }, 'TICKETS_URL must be an http(s) URL'],
    [
      { TICKETS_URL: 'https://tickets.test/api', TICKETS_TIMEOUT_MS: 'soon' },
      'TICKETS_TIMEOUT_MS must be an integer from 100 to 60000; got "soon"',
    ],
  ])('a bad setting is a ConfigError that names it (%j)', (env, message) => {
    expect(() => build(env)).toThrow(ConfigError)
    expect(() => build(env)).toThrow(message)
  })
})
