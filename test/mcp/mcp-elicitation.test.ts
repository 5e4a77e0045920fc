/**
 * A server's question during a call (`elicitation/create`): the sessions declare elicitation only
 * when someone answers (`new McpSessions(auth, { ask })`), the question reaches the asker as the
 * server put it, and the answer goes back checked, with the requested schema's defaults applied
 * (SEP-1034). The fake's `search_section` asks which section to search.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { react } from '../../src/kernel/index'
import {
  checkAnswer,
  freezeMcpTools,
  mcpTools,
  McpSessions,
  readMcpServers,
  type McpAnswer,
  type McpQuestion,
} from '../../src/mcp/index'
import { FakeMcp, FAKE_MCP_HOST, SECTION_SCHEMA } from '../fakes/fake-mcp'
import { nativeCall, nativeCalls, ScriptedModel, textFinish } from '../fakes/scripted-model'
import { useServiceFakes } from '../service/harness'

let mcp: FakeMcp
useServiceFakes({
  openai: false,
  hosts: () => {
    mcp = new FakeMcp()
    mcp.streams = true
    return { [FAKE_MCP_HOST]: mcp.handler }
  },
})

const servers = () => readMcpServers(env as unknown as Record<string, string>)

/** One react() run that calls search_section once, with `sessions`; its one observation. */
async function searchSection(sessions: McpSessions): Promise<string> {
  const frozen = await freezeMcpTools(servers(), ['docs__search_section'], 'native')
  const model = new ScriptedModel([
    nativeCalls([nativeCall('docs__search_section', { query: 'alarms' }, 'c1')]),
    textFinish('Done.'),
  ])
  try {
    const result = await react('Search', mcpTools(frozen, servers(), sessions).tools, { model })
    return result.steps[0]!.calls[0]!.observation
  } finally {
    await sessions.close()
  }
}

describe('MCP elicitation', () => {
  it('asks the asker the server’s question and sends its answer with the defaults filled in', async () => {
    const asked: McpQuestion[] = []
    const ask = async (q: McpQuestion): Promise<McpAnswer> => {
      asked.push(q)
      return { action: 'accept', content: { section: 'reference' } }
    }
    const observation = await searchSection(new McpSessions(undefined, { ask }))
    expect(asked).toEqual([
      {
        server: 'docs',
        mode: 'form',
        message: 'Which section should "alarms" be searched in?',
        schema: SECTION_SCHEMA,
      },
    ])
    expect(mcp.elicitAnswers).toEqual([
      { action: 'accept', content: { section: 'reference', limit: 10 } },
    ])
    expect(observation).toContain('searched {"section":"reference","limit":10} for "alarms"')
  })

  it.each(['decline', 'cancel'] as const)(
    'sends a %s as it is, without content',
    async (action) => {
      const ask = async (): Promise<McpAnswer> => ({ action, content: { section: 'faq' } })
      const observation = await searchSection(new McpSessions(undefined, { ask }))
      expect(mcp.elicitAnswers).toEqual([{ action }])
      expect(observation).toContain(`not searched: ${action}`)
    },
  )

  it('declares nothing without an asker: the server cannot ask, and its call fails', async () => {
    const observation = await searchSection(new McpSessions())
    expect(mcp.elicitAnswers).toEqual([])
    expect(observation).toMatch(/^\[ToolError\]/)
    // Our client has no handler for the request: the JSON-RPC answer for an unknown method.
    expect(observation).toContain('Method not found')
  })
})

describe('checkAnswer', () => {
  const form: McpQuestion = {
    server: 'docs',
    mode: 'form',
    message: 'Which?',
    schema: SECTION_SCHEMA,
  }
  const url: McpQuestion = {
    server: 'docs',
    mode: 'url',
    message: 'Sign the terms',
    url: 'https://mcp.test/terms',
    elicitationId: 'e1',
  }

  it('applies every default the content leaves out, keeping what it gives', () => {
    expect(checkAnswer(form, { action: 'accept' })).toEqual({
      ok: true,
      answer: { action: 'accept', content: { section: 'guides', limit: 10 } },
    })
    expect(checkAnswer(form, { action: 'accept', content: { limit: 3, note: 'x' } })).toEqual({
      ok: true,
      answer: { action: 'accept', content: { section: 'guides', limit: 3, note: 'x' } },
    })
  })

  it.each([
    [{ section: 'blog' }, 'content.section'],
    [{ limit: 500 }, 'content.limit'],
    [{ limit: 'ten' }, 'content.limit'],
  ])('refuses content that fails the schema: %j', (content, where) => {
    const out = checkAnswer(form, { action: 'accept', content })
    expect(out.ok).toBe(false)
    expect(!out.ok && out.problems.join('; ')).toContain(where)
  })

  it('takes no content for a URL question, and drops it from a decline', () => {
    expect(checkAnswer(url, { action: 'accept' })).toEqual({
      ok: true,
      answer: { action: 'accept' },
    })
    expect(checkAnswer(url, { action: 'accept', content: { a: 1 } }).ok).toBe(false)
    expect(checkAnswer(form, { action: 'decline', content: { section: 'faq' } })).toEqual({
      ok: true,
      answer: { action: 'decline' },
    })
  })
})
