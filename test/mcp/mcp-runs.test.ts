/**
 * MCP servers as tool sources, through the Worker: a real MCP server built with the SDK
 * (test/fakes/fake-mcp.ts) on mcp.test, configured in vitest.config.ts as the "docs" server
 * (token in DOCS_MCP_AUTH, a name that does not look like a secret; `list_pages` overridden to
 * need approval), and "down", which answers 503 to everything.
 */
import { evictDurableObject, runInDurableObject } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import wranglerToml from '../../wrangler.toml?raw'
import { reply } from '../fakes/fake-openai'
import { FakeMcp, FAKE_MCP_TOKEN, mcpTestHosts } from '../fakes/fake-mcp'
import {
  decide,
  drainAlarms,
  getRun,
  getTrace,
  postJson,
  startRun,
  stubOf,
  useServiceFakes,
} from '../service/harness'

let mcp: FakeMcp
const fakes = useServiceFakes({
  hosts: () => mcpTestHosts((m) => (mcp = m)),
})

const call = (id: string, name: string, args: Record<string, unknown>) =>
  reply.toolCalls([{ id, name, arguments: args }])

/** The tools the model was offered in its `n`th request, by name. */
function offered(n = 0): Record<string, { description: string; parameters: unknown }> {
  return Object.fromEntries(fakes.ai.bodies[n]!.tools!.map((t) => [t.function.name, t.function]))
}

/** The run's tools as stored in its state: the names it was created with and will resume with. */
async function storedTools(id: string): Promise<string[]> {
  return runInDurableObject(stubOf(id), (_instance, state) => {
    const row = state.storage.sql
      .exec<{ v: string }>("SELECT v FROM run WHERE k = 'state'")
      .toArray()[0]!
    return (JSON.parse(row.v) as { tools: string[] }).tools
  })
}

/** Starts a run, lets it reach its approval, approves it, and lets it finish. */
async function approveAndFinish(id: string, callId: string): Promise<void> {
  await drainAlarms(id)
  const view = await getRun(id)
  expect(view.status).toBe('awaiting_approval')
  const pending = view.pendingApprovals.find((p) => p.callId === callId)!
  await decide(id, callId, { decision: 'approve', args_hash: pending.argsHash })
  await drainAlarms(id)
}

describe('an MCP server’s tools in a run', () => {
  it('are offered as <server>__<tool> with the server’s description and schema as is', async () => {
    fakes.ai.enqueue(call('c1', 'docs__search', { query: 'rollback' }), reply.text('Three pages.'))
    const id = await startRun({ task: 'How many pages mention rollback?', tools: ['docs__*'] })
    await drainAlarms(id)

    expect(Object.keys(offered())).toEqual([
      'docs__search',
      'docs__delete_page',
      'docs__upsert_page',
      'docs__archive_page',
      'docs__reindex',
      'docs__list_pages',
      'read_observation',
    ])
    expect(offered().docs__search).toEqual({
      name: 'docs__search',
      description: 'Search the docs. query: words to look for.',
      parameters: {
        type: 'object',
        properties: { query: { type: 'string', minLength: 1 } },
        required: ['query'],
        $schema: 'http://json-schema.org/draft-07/schema#',
      },
    })
    expect(await getTrace(id)).toMatchObject({ ok: true, answer: 'Three pages.' })
    expect((await getTrace(id)).steps[0]!.calls[0]).toMatchObject({
      name: 'docs__search',
      status: 'done',
      observation: '3 pages mention "rollback"',
    })
    expect(mcp.calls).toEqual([
      { tool: 'search', args: { query: 'rollback' }, idempotencyKey: `${id}:c1` },
    ])
    // The token named by token_secret, on every request to the server.
    expect(mcp.authorizations.length).toBeGreaterThan(2)
    expect(new Set(mcp.authorizations)).toEqual(new Set([`Bearer ${FAKE_MCP_TOKEN}`]))
  })

  it('are all offered, next to the enabled tools, when a run names no tools', async () => {
    fakes.ai.enqueue(reply.text('Nothing to do.'))
    const id = await startRun({ task: 'Say hi' })
    await drainAlarms(id)
    expect(Object.keys(offered())).toEqual(
      expect.arrayContaining(['calculator', 'http_post', 'docs__search', 'down__unavailable']),
    )
  })

  it('a destructive tool waits for approval, and runs once when approved', async () => {
    fakes.ai.enqueue(call('c1', 'docs__delete_page', { page: 'old-faq' }), reply.text('Deleted.'))
    const id = await startRun({ task: 'Delete the old FAQ', tools: ['docs__delete_page'] })
    await drainAlarms(id)
    const view = await getRun(id)
    expect(view.pendingApprovals).toMatchObject([
      { callId: 'c1', tool: 'docs__delete_page', args: { page: 'old-faq' } },
    ])
    expect(mcp.calls).toEqual([]) // nothing reached the server before the approval
    await approveAndFinish(id, 'c1')
    expect(mcp.calls).toEqual([
      { tool: 'delete_page', args: { page: 'old-faq' }, idempotencyKey: `${id}:c1` },
    ])
    expect((await getTrace(id)).steps[0]!.calls[0]).toMatchObject({
      status: 'done',
      observation: 'deleted old-faq',
    })
  })

  it('a tool without annotations is a side effect too', async () => {
    fakes.ai.enqueue(call('c1', 'docs__archive_page', { page: 'v1' }))
    const id = await startRun({ task: 'Archive v1', tools: ['docs__*'] })
    await drainAlarms(id)
    expect((await getRun(id)).pendingApprovals).toMatchObject([{ tool: 'docs__archive_page' }])
    expect(offered().docs__archive_page!.description).toContain('a person must approve')
  })

  it('an override makes a read-only tool need approval', async () => {
    fakes.ai.enqueue(call('c1', 'docs__list_pages', {}))
    const id = await startRun({ task: 'List the pages', tools: ['docs__list_pages'] })
    await drainAlarms(id)
    expect((await getRun(id)).pendingApprovals).toMatchObject([{ tool: 'docs__list_pages' }])
    expect(mcp.calls).toEqual([])
  })

  it('an idempotent tool gets the idempotency key in _meta; structured content is the observation', async () => {
    fakes.ai.enqueue(
      call('c1', 'docs__upsert_page', { page: 'setup', text: 'npm ci' }),
      reply.text('Saved.'),
    )
    const id = await startRun({ task: 'Save the setup page', tools: ['docs__upsert_page'] })
    await approveAndFinish(id, 'c1')
    expect(mcp.calls).toEqual([
      { tool: 'upsert_page', args: { page: 'setup', text: 'npm ci' }, idempotencyKey: `${id}:c1` },
    ])
    expect((await getTrace(id)).steps[0]!.calls[0]!.observation).toBe(
      '{"page":"setup","bytes":6,"saved":true}',
    )
  })

  it.each([
    ['a read-only tool', 'docs__search', { query: '' }, 'query'],
    ['a side effect', 'docs__delete_page', { page: 42 }, 'page'],
  ])(
    'arguments that fail the server’s schema are a [ToolError] (%s), and nobody is asked',
    async (_what, tool, args, field) => {
      fakes.ai.enqueue(call('c1', tool, args), reply.text('Could not.'))
      const id = await startRun({ task: 'Try it', tools: ['docs__*'] })
      await drainAlarms(id)
      const done = await getRun(id)
      expect(done.status).toBe('succeeded')
      const observation = (await getTrace(id)).steps[0]!.calls[0]!.observation
      expect(observation).toMatch(
        new RegExp(`^\\[ToolError\\] invalid arguments for ${tool}:\\n- ${field}: `),
      )
      expect(mcp.calls).toEqual([])
    },
  )

  it('isError: true from the server is a [ToolError]', async () => {
    fakes.ai.enqueue(call('c1', 'docs__reindex', {}), reply.text('The index is locked.'))
    const id = await startRun({ task: 'Reindex', tools: ['docs__reindex'] })
    await drainAlarms(id)
    expect((await getTrace(id)).steps[0]!.calls[0]).toMatchObject({
      kind: 'tool_error',
      observation:
        '[ToolError] docs__reindex failed: Error: the docs MCP server answered with an error: ' +
        'the index is locked by another rebuild',
    })
  })

  it('a large result is truncated and kept whole by handle', async () => {
    fakes.ai.enqueue(call('c1', 'docs__search', { query: 'everything' }), reply.text('Long.'))
    const id = await startRun({ task: 'Find everything', tools: ['docs__search'] })
    await drainAlarms(id)
    const c = (await getTrace(id)).steps[0]!.calls[0]!
    expect(c).toMatchObject({ truncated: true, handle: 'obs_c1', originalSize: 36_000 })
    expect(c.observation).toContain('Call read_observation with this handle')
  })

  it('a read-only tool that does not answer in timeout_ms times out', async () => {
    fakes.ai.enqueue(call('c1', 'docs__search', { query: 'slow' }), reply.text('Timed out.'))
    const id = await startRun({ task: 'Search slowly', tools: ['docs__search'] })
    mcp.hanging.add('search')
    await drainAlarms(id)
    expect((await getTrace(id)).steps[0]!.calls[0]!.observation).toBe(
      '[ToolError] docs__search timed out after 2000ms',
    )
  })

  it('a side effect that does not answer in timeout_ms has an unknown outcome, sent once', async () => {
    fakes.ai.enqueue(call('c1', 'docs__delete_page', { page: 'faq' }), reply.text('Unsure.'))
    const id = await startRun({ task: 'Delete the FAQ', tools: ['docs__delete_page'] })
    mcp.hanging.add('delete_page')
    await approveAndFinish(id, 'c1')
    expect((await getTrace(id)).steps[0]!.calls[0]).toMatchObject({
      kind: 'outcome_unknown',
      observation:
        '[ToolError] docs__delete_page timed out after 2000ms; its outcome is unknown (it may ' +
        'have taken effect). Check its effect before retrying.',
    })
    expect(mcp.calls.map((c) => c.tool)).toEqual(['delete_page'])
  })
})

describe('the Worker that runs the MCP client', () => {
  it("has nodejs_compat only for A2A's Buffer: the SDK runs with the cfworker validator", () => {
    // The one flag is nodejs_compat (@a2a-js/sdk's v0.3 translation needs Node's `Buffer`,
    // docs/decisions.md#a2a-with-a2a-jssdk); nothing else of Node is switched on.
    expect(wranglerToml).toMatch(/^compatibility_flags = \["nodejs_compat"\]$/m)
    // ajv compiles schemas with new Function, which Workers forbid: it is aliased out.
    expect(wranglerToml).toMatch(/^"ajv" = "\.\/src\/mcp\/ajv-stub\.ts"$/m)
  })
})

describe('the tool list of a run', () => {
  it('is fetched when the run starts and never changes after, across a restart', async () => {
    fakes.ai.enqueue(call('c1', 'docs__delete_page', { page: 'a' }), reply.text('Done.'))
    const id = await startRun({ task: 'Delete a', tools: ['docs__*'] })
    await drainAlarms(id)
    expect(mcp.listed).toBe(1)
    mcp.addTool = true // the server's list changes while the run waits for a person
    await evictDurableObject(stubOf(id))
    await approveAndFinish(id, 'c1')
    expect(fakes.ai.bodies).toHaveLength(2)
    expect(Object.keys(offered(1))).toEqual(Object.keys(offered(0)))
    expect(Object.keys(offered(1))).not.toContain('docs__new_tool')
    expect(await storedTools(id)).not.toContain('docs__new_tool')
    expect(await storedTools(id)).toContain('docs__delete_page')
    expect(mcp.listed).toBe(1)
  })

  it('of a server that is down gives its tools a clear error, and the run goes on', async () => {
    fakes.ai.enqueue(
      call('c1', 'down__create_issue', { title: 'x' }),
      call('c2', 'calculator', { expression: '1+1' }),
      reply.text('The tracker is down; 1+1 is 2.'),
    )
    const id = await startRun({ task: 'File it', tools: ['calculator', 'down__create_issue'] })
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, answer: 'The tracker is down; 1+1 is 2.' })
    expect(trace.steps[0]!.calls[0]!.observation).toMatch(
      /^\[ToolError\] down__create_issue failed: Error: the down MCP server could not be reached when this run started \(HTTP 503: .*upstream connect error\), so down__create_issue is not available in this run; go on without it, or tell the user$/,
    )
    expect(offered().down__create_issue!.description).toMatch(/^Unavailable: the down MCP server/)
    expect(await storedTools(id)).toEqual(['calculator', 'down__create_issue'])
  })

  it('of a server that is down, asked for all its tools, is one tool that says so', async () => {
    fakes.ai.enqueue(call('c1', 'down__unavailable', {}), reply.text('The tracker is down.'))
    const id = await startRun({ task: 'File it', tools: ['down__*'] })
    await drainAlarms(id)
    expect(Object.keys(offered())).toEqual(['down__unavailable', 'read_observation'])
    expect((await getTrace(id)).steps[0]!.calls[0]).toMatchObject({
      kind: 'tool_error',
      observation: expect.stringContaining('the down MCP server could not be reached'),
    })
  })

  it('holds a tool asked for by name that the server does not list, as one that says so', async () => {
    fakes.ai.enqueue(call('c1', 'docs__purge', {}), reply.text('There is no purge.'))
    const id = await startRun({ task: 'Purge', tools: ['docs__search', 'docs__purge'] })
    await drainAlarms(id)
    expect(Object.keys(offered())).toEqual(['docs__search', 'docs__purge', 'read_observation'])
    expect((await getTrace(id)).steps[0]!.calls[0]!.observation).toBe(
      '[ToolError] docs__purge failed: Error: the docs MCP server did not list a tool "purge" ' +
        'when this run started, so docs__purge is not available in this run; go on without it, ' +
        'or tell the user',
    )
    expect(mcp.calls).toEqual([])
  })

  it('leaves out a tool whose name no model API takes, and offers the rest', async () => {
    fakes.ai.enqueue(reply.text('Fine.'))
    const id = await startRun({ task: 'Look', tools: ['docs__*'] })
    await drainAlarms(id)
    expect(Object.keys(offered())).not.toContain('docs__pages.export')
    expect(await storedTools(id)).toEqual([
      'docs__search',
      'docs__delete_page',
      'docs__upsert_page',
      'docs__archive_page',
      'docs__reindex',
      'docs__list_pages',
    ])
  })

  it('is not fetched for a run that names no MCP tool', async () => {
    fakes.ai.enqueue(reply.text('2.'))
    const id = await startRun({ task: '1+1', tools: ['calculator'] })
    await drainAlarms(id)
    expect(mcp.listed).toBe(0)
    expect(await storedTools(id)).toEqual(['calculator'])
  })
})

describe('a run request naming MCP tools', () => {
  it('of a server that is not configured is a 400 unknown_tools', async () => {
    const res = await postJson('/v1/runs', { task: 'x', tools: ['github__create_issue'] })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({
      error: {
        code: 'unknown_tools',
        details: { unknown: ['github__create_issue'], mcpServers: ['docs', 'down'] },
      },
    })
  })
})
