import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/config'
import {
  frozenToolNames,
  mcpToolPolicy,
  mcpTools,
  readMcpServers,
  renderMcpResult,
  type FrozenMcpServer,
} from '../../src/mcp/index'

const docs = { name: 'docs', url: 'https://docs.test/mcp' }
const read = (servers: unknown, env: Record<string, string> = {}) =>
  readMcpServers({ MCP_SERVERS: JSON.stringify(servers), ...env })

describe('MCP_SERVERS', () => {
  it('is empty when unset', () => {
    expect(readMcpServers({})).toEqual([])
  })

  it('reads every field, and the token from the secret it names (kept out of JSON)', () => {
    const [server] = read(
      [
        {
          ...docs,
          token_secret: 'DOCS_TOKEN',
          tools: ['search'],
          timeout_ms: 5000,
          overrides: { search: { sideEffect: true } },
        },
      ],
      { DOCS_TOKEN: ' secret-1 ' },
    )
    expect(server).toEqual({
      name: 'docs',
      url: 'https://docs.test/mcp',
      tokenSecret: 'DOCS_TOKEN',
      tools: ['search'],
      timeoutMs: 5000,
      overrides: { search: { sideEffect: true } },
    })
    expect(server!.token).toBe('secret-1')
    expect(JSON.stringify(server)).not.toContain('secret-1')
  })

  it.each([
    ['not JSON', '[{', 'MCP_SERVERS must be a JSON array of servers ('],
    ['not an array', '{"name":"docs"}', 'MCP_SERVERS must be a JSON array of servers, e.g.'],
    [
      'a bad name',
      [{ ...docs, name: 'Docs Server' }],
      'MCP_SERVERS entry 0 ("Docs Server"): name must be 1–32 of a-z, 0-9, _ and -',
    ],
    [
      'no url',
      [{ name: 'docs' }],
      'MCP_SERVERS entry 0 ("docs"): url is required or has the wrong type',
    ],
    [
      'a url that is not http(s)',
      [{ ...docs, url: 'ws://docs.test/mcp' }],
      'MCP_SERVERS entry 0 ("docs"): url must be the http(s) URL of a Streamable HTTP MCP endpoint',
    ],
    [
      'an unknown key',
      [{ ...docs, headers: {} }],
      'MCP_SERVERS entry 0 ("docs"): unknown key headers; allowed: name, url, token_secret',
    ],
    [
      'a second server with the same name',
      [docs, docs],
      'MCP_SERVERS entry 1 ("docs"): the name "docs" is used twice',
    ],
    [
      'an override that loosens',
      [{ ...docs, overrides: { delete_page: { sideEffect: false } } }],
      'MCP_SERVERS entry 0 ("docs"): overrides.delete_page: an override can only make a tool stricter',
    ],
    [
      'an override with an unknown key',
      [{ ...docs, overrides: { search: { approve: 'never' } } }],
      'MCP_SERVERS entry 0 ("docs"): overrides.search: unknown key approve',
    ],
    [
      'a timeout out of range',
      [{ ...docs, timeout_ms: 10 }],
      'MCP_SERVERS entry 0 ("docs"): timeout_ms must be at least 100',
    ],
  ])('%s is a ConfigError naming MCP_SERVERS and the entry', (_what, value, message) => {
    const parse = () =>
      readMcpServers({ MCP_SERVERS: typeof value === 'string' ? value : JSON.stringify(value) })
    expect(parse).toThrow(ConfigError)
    expect(parse).toThrow(message)
  })

  it('a token_secret that is not set names that secret', () => {
    expect(() => read([{ ...docs, token_secret: 'DOCS_TOKEN' }])).toThrow(
      'MCP_SERVERS server "docs" names token_secret DOCS_TOKEN, which is not set; set it with `wrangler secret put DOCS_TOKEN`',
    )
  })
})

describe('annotations → policy', () => {
  it.each([
    ['readOnlyHint: true', { readOnlyHint: true }, undefined, false, false],
    ['destructiveHint: true', { destructiveHint: true }, undefined, true, false],
    ['no annotations', undefined, undefined, true, false],
    ['readOnlyHint: false', { readOnlyHint: false }, undefined, true, false],
    ['idempotentHint: true', { readOnlyHint: false, idempotentHint: true }, undefined, true, true],
    [
      'read-only, idempotentHint ignored',
      { readOnlyHint: true, idempotentHint: true },
      undefined,
      false,
      false,
    ],
    [
      'override sideEffect on a read-only tool',
      { readOnlyHint: true },
      { sideEffect: true },
      true,
      false,
    ],
    ['override idempotent: false', { idempotentHint: true }, { idempotent: false }, true, false],
    [
      'readOnlyHint and destructiveHint together: the stricter reading',
      { readOnlyHint: true, destructiveHint: true },
      undefined,
      true,
      false,
    ],
  ] as const)('%s', (_what, hints, override, sideEffect, idempotent) => {
    expect(mcpToolPolicy(hints, override)).toEqual({ sideEffect, idempotent })
  })
})

describe('an MCP result as the observation', () => {
  it.each([
    [
      'text content',
      {
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
      'a\nb',
    ],
    ['structured content', { content: [], structuredContent: { n: 1 } }, '{"n":1}'],
    [
      'an embedded text resource',
      { content: [{ type: 'resource', resource: { uri: 'x:1', text: 'doc' } }] },
      'doc',
    ],
    [
      'an image',
      { content: [{ type: 'image', mimeType: 'image/png' }] },
      '[image content (image/png) not shown]',
    ],
    ['nothing', { content: [] }, '(no output)'],
  ])('%s', (_what, result, text) => {
    expect(renderMcpResult(result)).toBe(text)
  })
})

describe('a run’s frozen MCP tools', () => {
  const frozen: FrozenMcpServer[] = [
    {
      server: 'docs',
      tools: [
        {
          name: 'search',
          description: 'Search the docs.',
          inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
          annotations: { readOnlyHint: true },
        },
      ],
    },
    { server: 'tracker', tools: [], error: 'HTTP 503: down', unavailable: ['unavailable'] },
  ]

  it('are built under the names the run was given, in that order', () => {
    const { tools, skipped } = mcpTools(frozen, read([docs, { name: 'tracker', url: docs.url }]))
    expect(skipped).toEqual([])
    expect(tools.map((t) => t.name)).toEqual(frozenToolNames(frozen))
    expect(tools.map((t) => t.name)).toEqual(['docs__search', 'tracker__unavailable'])
  })

  it('take an override deployed after the run started: stricter at once', () => {
    const servers = read([{ ...docs, overrides: { search: { sideEffect: true } } }])
    expect(mcpTools(frozen, servers).tools[0]).toMatchObject({ sideEffect: true })
    expect(mcpTools(frozen, read([docs])).tools[0]).toMatchObject({ sideEffect: false })
  })

  it('of a server taken out of MCP_SERVERS stay as they were; every call says why', async () => {
    const { tools } = mcpTools(frozen, [])
    expect(tools[0]).toMatchObject({
      name: 'docs__search',
      description: 'Search the docs.',
      inputSchema: frozen[0]!.tools[0]!.inputSchema,
      sideEffect: false,
    })
    const ctx = { runId: 'r', callId: 'c', idempotencyKey: 'r:c', signal: AbortSignal.timeout(1) }
    await expect(async () => tools[0]!.handler({ query: 'x' }, ctx as never)).rejects.toThrow(
      'the docs MCP server is no longer in MCP_SERVERS, so its tools cannot be called',
    )
  })
})
