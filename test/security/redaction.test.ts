/**
 * Redaction by value: which values are secrets (whatever their setting is called), the forms an
 * echo takes, and the shortest secret the configuration accepts.
 */
import { describe, expect, it } from 'vitest'
import { createRedactor, MIN_SECRET_LENGTH } from '../../src/kernel/index'
import { secretValues } from '../../src/security/secret-values'
import { AUTH } from '../service/harness'
import { fetchWith } from '../service/worker-with'

describe('the configured secrets', () => {
  it('are found by name, by a secret-like name, as MCP token_secret targets and OTLP header values', () => {
    const found = secretValues({
      WEBHOOK_SECRET: 'hook-secret-1',
      TICKETS_API_KEY: 'tickets-key-22',
      DOCS_CREDENTIAL: 'docs-credential-333',
      MCP_SERVERS: JSON.stringify([
        { name: 'docs', url: 'https://docs.test/mcp', token_secret: 'DOCS_CREDENTIAL' },
      ]),
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=otlp%20key%204444,x-dataset=prod',
      OPENAI_API_KEY: 'none',
      MODEL: 'gpt-4o-mini',
    })
    expect(found).toEqual([
      { setting: 'WEBHOOK_SECRET', value: 'hook-secret-1' },
      { setting: 'TICKETS_API_KEY', value: 'tickets-key-22' },
      { setting: 'DOCS_CREDENTIAL', value: 'docs-credential-333' },
      { setting: 'OTEL_EXPORTER_OTLP_HEADERS', value: 'otlp%20key%204444' },
      { setting: 'OTEL_EXPORTER_OTLP_HEADERS', value: 'otlp key 4444' },
    ])
  })

  it("are not edgeloop's own settings named like a secret: EVENT_STREAMS_PER_TOKEN is a count", () => {
    expect(secretValues({ EVENT_STREAMS_PER_TOKEN: '60', MY_TOOL_TOKEN: 'tool-token-55' })).toEqual(
      [{ setting: 'MY_TOOL_TOKEN', value: 'tool-token-55' }],
    )
  })

  it('are still found when MCP_SERVERS does not parse as a whole', () => {
    expect(secretValues({ MCP_SERVERS: '{"not": "a list"}', X: 'y' })).toEqual([])
    const list = JSON.stringify([{ token_secret: 'A_KEY_NAME', url: 7 }])
    expect(secretValues({ MCP_SERVERS: list, A_KEY_NAME: 'value-of-a-key' })).toEqual([
      { setting: 'A_KEY_NAME', value: 'value-of-a-key' },
    ])
  })
})

describe('a redactor', () => {
  const redact = createRedactor(['s3cret"value\\x', 'abc-123-def', 'abc-123-def-456'])

  it.each([
    ['as it is', 'token abc-123-def here', 'token [redacted] here'],
    ['the longer of two that overlap, whole', 'id abc-123-def-456', 'id [redacted]'],
    ['JSON-escaped', '{"k":"s3cret\\"value\\\\x"}', '{"k":"[redacted]"}'],
    ['URL-encoded', '?t=s3cret%22value%5Cx', '?t=[redacted]'],
    ['an OpenAI key that is not ours', 'key sk-abcdefghijkl', 'key [redacted]'],
    ['a Slack token that is not ours', 'xoxb-1234-abcdef', '[redacted]'],
  ])('replaces a secret %s', (_how, text, out) => {
    expect(redact(text)).toBe(out)
  })

  it(`looks for nothing shorter than ${MIN_SECRET_LENGTH} characters (ordinary words)`, () => {
    expect(createRedactor(['prod', 'a'])('prod is a word')).toBe('prod is a word')
  })
})

describe('a configured secret too short to be found by value', () => {
  it('is a 503 naming the setting, never its value', async () => {
    const res = await fetchWith({ WEBHOOK_SECRET: 'abc12' }, '/readyz', { headers: AUTH })
    expect(res.status).toBe(503)
    const text = await res.text()
    expect(JSON.parse(text)).toMatchObject({
      error: {
        code: 'misconfigured',
        details: {
          problems: [
            {
              variable: 'WEBHOOK_SECRET',
              message: expect.stringContaining(`shorter than ${MIN_SECRET_LENGTH} characters`),
            },
          ],
        },
      },
    })
    expect(text).not.toContain('abc12')
  })

  it('is not a short count in a setting named like a secret (EVENT_STREAMS_PER_TOKEN=60)', async () => {
    const res = await fetchWith({ EVENT_STREAMS_PER_TOKEN: '60' }, '/readyz', { headers: AUTH })
    expect(res.status).toBe(200)
  })
})
