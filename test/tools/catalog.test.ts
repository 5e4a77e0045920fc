import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/config'
import { ToolRegistry } from '../../src/kernel/registry'
import { buildToolset, KNOWN_TOOLS, parseToolList } from '../../tools'

const HTTP = { HTTP_ALLOWLIST: 'a.test' }

describe('tool catalog', () => {
  it('knows the standard and demo tools', () => {
    expect(KNOWN_TOOLS).toEqual(
      expect.arrayContaining([
        'calculator',
        'http_get',
        'http_post',
        'query_metrics',
        'search_logs',
        'read_repo_file',
        'rollback_deploy',
      ]),
    )
  })

  it('builds every known tool, in the order named', () => {
    const tools = buildToolset([...KNOWN_TOOLS].reverse(), HTTP)
    expect(tools.map((t) => t.name)).toEqual([...KNOWN_TOOLS].reverse())
    expect(new ToolRegistry(tools).names()).toHaveLength(KNOWN_TOOLS.length)
  })

  it('builds the list from the wrangler default with no other setting', () => {
    const enabled = parseToolList(
      'calculator,query_metrics,search_logs,read_repo_file,rollback_deploy',
    )
    const tools = buildToolset(enabled, {})
    expect(tools.map((t) => t.name)).toEqual(enabled)
  })

  it('drops duplicate names', () => {
    const tools = buildToolset(['calculator', 'calculator'], {})
    expect(tools.map((t) => t.name)).toEqual(['calculator'])
  })

  it('names the unknown tools and the known ones', () => {
    const build = () => buildToolset(['calculator', 'shell', 'send_mail'], {})
    expect(build).toThrow(ConfigError)
    expect(build).toThrow(
      `ENABLED_TOOLS names unknown tools shell, send_mail; known: ${KNOWN_TOOLS.join(', ')}`,
    )
  })

  it.each(['http_get', 'http_post'])('%s without HTTP_ALLOWLIST names that variable', (name) => {
    let error: ConfigError | undefined
    try {
      buildToolset([name], { HTTP_ALLOWLIST: ' ' })
    } catch (err) {
      error = err as ConfigError
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect(error!.variable).toBe('HTTP_ALLOWLIST')
    expect(error!.message).toBe(
      'HTTP_ALLOWLIST is required: list the hosts the HTTP tools may reach, e.g. ' +
        `"docs.example.com,*.example.org" (needed by the enabled tool ${name})`,
    )
  })

  it('names a bad allowlist entry', () => {
    expect(() => buildToolset(['http_get'], { HTTP_ALLOWLIST: 'a.test,https://b.test/x' })).toThrow(
      'HTTP_ALLOWLIST: allowlist entry "https://b.test/x" is not a host',
    )
  })

  it.each([
    ['true', true],
    ['false', false],
    [undefined, false],
  ])('HTTP_POST_IDEMPOTENT=%s makes http_post idempotent: %s', (value, idempotent) => {
    const [post] = buildToolset(['http_post'], { ...HTTP, HTTP_POST_IDEMPOTENT: value })
    expect(post!.idempotent).toBe(idempotent)
  })

  it('refuses a HTTP_POST_IDEMPOTENT that is not a boolean', () => {
    expect(() => buildToolset(['http_post'], { ...HTTP, HTTP_POST_IDEMPOTENT: 'maybe' })).toThrow(
      'HTTP_POST_IDEMPOTENT must be true or false; got "maybe" (needed by the enabled tool http_post)',
    )
  })

  it('puts the allowlist into the http tools', () => {
    const [get] = buildToolset(['http_get'], { HTTP_ALLOWLIST: 'docs.allowed.test' })
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
