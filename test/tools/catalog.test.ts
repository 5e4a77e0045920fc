import { describe, expect, it } from 'vitest'
import { ToolRegistry } from '../../src/kernel/registry'
import { buildToolset, KNOWN_TOOLS, parseToolList } from '../../tools'

describe('tool catalog', () => {
  it('knows the standard and demo tools', () => {
    expect(KNOWN_TOOLS).toEqual([
      'calculator',
      'http_get',
      'http_post',
      'query_metrics',
      'search_logs',
      'read_repo_file',
      'rollback_deploy',
    ])
  })

  it('builds every known tool, in the order named', () => {
    const tools = buildToolset({ enabled: [...KNOWN_TOOLS].reverse(), httpAllowlist: ['a.test'] })
    expect(tools.map((t) => t.name)).toEqual([...KNOWN_TOOLS].reverse())
    expect(new ToolRegistry(tools).names()).toHaveLength(KNOWN_TOOLS.length)
  })

  it('builds the list from the wrangler default without an allowlist', () => {
    const enabled = parseToolList(
      'calculator,query_metrics,search_logs,read_repo_file,rollback_deploy',
    )
    const tools = buildToolset({ enabled, httpAllowlist: [] })
    expect(tools.map((t) => t.name)).toEqual(enabled)
  })

  it('drops duplicate names', () => {
    const tools = buildToolset({ enabled: ['calculator', 'calculator'], httpAllowlist: [] })
    expect(tools.map((t) => t.name)).toEqual(['calculator'])
  })

  it('names the unknown tools and the known ones', () => {
    expect(() =>
      buildToolset({ enabled: ['calculator', 'shell', 'send_mail'], httpAllowlist: [] }),
    ).toThrow(
      new TypeError(
        'unknown tools "shell", "send_mail" in the enabled list; known tools: calculator, ' +
          'http_get, http_post, query_metrics, search_logs, read_repo_file, rollback_deploy',
      ),
    )
  })

  it.each(['http_get', 'http_post'])('refuses to build %s without an allowlist', (name) => {
    expect(() => buildToolset({ enabled: [name], httpAllowlist: [] })).toThrow(
      `${name}: the allowlist is empty`,
    )
  })

  it('puts the allowlist into the http tools', () => {
    const [get] = buildToolset({ enabled: ['http_get'], httpAllowlist: ['docs.allowed.test'] })
    expect(get!.description).toContain('on these hosts only: docs.allowed.test')
  })

  it.each([
    [undefined, []],
    ['', []],
    [' , ,', []],
    ['calculator', ['calculator']],
    [' calculator , http_get,,search_logs ', ['calculator', 'http_get', 'search_logs']],
  ])('parseToolList(%j) = %j', (csv, names) => {
    expect(parseToolList(csv)).toEqual(names)
  })
})
