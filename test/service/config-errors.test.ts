import { env } from 'cloudflare:workers'
import { createExecutionContext } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import worker from '../../src/index'
import type { Env } from '../../src/env'
import { JSON_AUTH, ORIGIN, useServiceFakes } from './harness'

/** POST /v1/runs to the Worker with some settings changed (a fresh env object: a fresh config). */
async function startWith(changes: Record<string, string>) {
  const changed = { ...env, ...changes } as Env
  const res = await worker.fetch(
    new Request(`${ORIGIN}/v1/runs`, {
      method: 'POST',
      headers: JSON_AUTH,
      body: JSON.stringify({ task: 'what is 2+2?' }),
    }),
    changed,
    createExecutionContext(),
  )
  return {
    status: res.status,
    body: (await res.json()) as { error: { code: string; message: string } },
  }
}

describe('a bad setting answers 503 misconfigured, naming the variable to fix', () => {
  useServiceFakes()

  it.each([
    [
      'a tool setting names the tool’s own variable',
      { HTTP_ALLOWLIST: '' },
      'HTTP_ALLOWLIST is required: list the hosts the HTTP tools may reach, e.g. ' +
        '"docs.example.com,*.example.org" (needed by the enabled tool http_get)',
    ],
    [
      'a bad allowlist entry',
      { HTTP_ALLOWLIST: 'api.allowed.test,http://x.test/path' },
      'HTTP_ALLOWLIST: allowlist entry "http://x.test/path" is not a host',
    ],
    [
      'a tool setting of the wrong kind',
      { HTTP_POST_IDEMPOTENT: 'sometimes' },
      'HTTP_POST_IDEMPOTENT must be true or false; got "sometimes" (needed by the enabled tool http_post)',
    ],
    [
      'an unknown tool',
      { ENABLED_TOOLS: 'calculator,shell' },
      'ENABLED_TOOLS names unknown tool shell; known: calculator, http_get',
    ],
    [
      'a service setting',
      { MAX_STEPS: '0' },
      'MAX_STEPS must be an integer from 1 to 1000; got "0"',
    ],
    [
      'a model setting',
      { MODEL_TEMPERATURE: 'warm' },
      'MODEL_TEMPERATURE must be a number from 0 to 2; got "warm"',
    ],
    [
      'a bad MCP server entry',
      {
        MCP_SERVERS: '[{"name":"docs","url":"https://docs.test/mcp"},{"name":"Tracker","url":"x"}]',
      },
      'MCP_SERVERS entry 1 ("Tracker"): name must be 1–32 of a-z, 0-9, _ and -',
    ],
    [
      'a Slack setting',
      { SLACK_APPROVERS: 'UAPPROVER1,bob' },
      'SLACK_APPROVERS: "bob" is not a Slack user id',
    ],
    [
      'a client metadata URL over http',
      { MCP_CLIENT_METADATA_URL: 'http://edgeloop.example.com/oauth/client-metadata.json' },
      'MCP_CLIENT_METADATA_URL is http, and a client id URL must be https',
    ],
    [
      'a client metadata URL without a path',
      { MCP_CLIENT_METADATA_URL: 'https://edgeloop.example.com' },
      'MCP_CLIENT_METADATA_URL has no path, and a client id URL must have one',
    ],
    [
      'a client metadata URL that is no URL',
      { MCP_CLIENT_METADATA_URL: 'edgeloop.example.com/client.json' },
      'MCP_CLIENT_METADATA_URL is not a URL: set it to the https URL where',
    ],
    [
      'an approvals channel that is not a channel id',
      { SLACK_APPROVALS_CHANNEL: '#ops' },
      'SLACK_APPROVALS_CHANNEL must be a Slack channel id (C…, G…, as the channel\'s details show it; not a #name); got "#ops"',
    ],
  ])('%s', async (_what, changes, message) => {
    const { status, body } = await startWith(changes)
    expect(status).toBe(503)
    expect(body.error.code).toBe('misconfigured')
    expect(body.error.message).toContain(message)
  })

  it('a tool that is not enabled does not need its settings', async () => {
    const { status } = await startWith({ ENABLED_TOOLS: 'calculator', HTTP_ALLOWLIST: '' })
    expect(status).toBe(202)
  })
})
