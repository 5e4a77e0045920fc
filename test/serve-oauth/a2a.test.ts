/**
 * /a2a as an OAuth protected resource too (docs/serving.md#authorization): a client registers,
 * a person authorizes it with an API token, and its access token for /a2a calls the A2A methods
 * as that token, with the scopes /mcp asks for. A token for another resource, or without them,
 * is refused with a JSON-RPC error and the challenge that says where to authorize.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { drainAlarms, getRun, ORIGIN, useServiceFakes } from '../service/harness'
import { A2A_URL, authorizeWith, MCP_URL, resourceMetadataOf, workerFetch } from './oauth-client'

const STARTER = 'test-starter-token' // runs:write, runs:read

/** A v1.0 JSON-RPC request to /a2a with `Authorization: Bearer <token>`. */
function a2aRpc(token: string | null, method: string, params: unknown): Promise<Response> {
  return workerFetch(A2A_URL, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
}

const NO_RUN = 'run_00000000000000000000000000000000'

// The task a test starts runs against the fake provider, so it ends (and calls nothing real).
const fakes = useServiceFakes()

describe('/a2a with OAuth access tokens', () => {
  it('answers without a token with a 401 naming /a2a’s own resource metadata', async () => {
    const res = await a2aRpc(null, 'GetTask', { id: NO_RUN })
    expect(res.status).toBe(401)
    const metadata = resourceMetadataOf(res)
    expect(String(metadata)).toBe(`${ORIGIN}/.well-known/oauth-protected-resource/a2a`)
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } })
    const resource = await workerFetch(metadata)
    expect(await resource.json()).toMatchObject({
      resource: A2A_URL,
      authorization_servers: [ORIGIN],
      scopes_supported: ['runs:read', 'runs:write'],
    })
  })

  it('takes an access token issued for /a2a as the API token the person proved', async () => {
    const client = await authorizeWith(STARTER, ['runs:read', 'runs:write'], A2A_URL)
    const token = client.saved!.access_token
    // Authenticated: the method itself answers (no such task), not the HTTP layer.
    const res = await a2aRpc(token, 'GetTask', { id: NO_RUN })
    expect(res.status, await res.clone().text()).toBe(200)
    expect(await res.json()).toMatchObject({
      error: { code: -32001, message: expect.stringContaining(NO_RUN) },
    })
    // A task started with it is the API token's run: the token's name is its requester.
    fakes.ai.enqueue(reply.text('Done.'))
    const sent = await a2aRpc(token, 'SendMessage', {
      message: {
        messageId: crypto.randomUUID(),
        role: 'ROLE_USER',
        parts: [{ text: 'finish with Done.' }],
      },
      configuration: { returnImmediately: true },
    })
    const body = (await sent.json()) as { result?: { task?: { id: string } } }
    expect(sent.status, JSON.stringify(body)).toBe(200)
    const id = body.result!.task!.id
    const view = await workerFetch(`${ORIGIN}/v1/runs/${id}`, {
      headers: { authorization: `Bearer ${STARTER}` },
    })
    expect(await view.json()).toMatchObject({ id, requestedBy: 'starter' })
    await drainAlarms(id)
    expect(await getRun(id)).toMatchObject({ status: 'succeeded', requestedBy: 'starter' })
  })

  it('refuses a token for /mcp: tokens are bound to their resource', async () => {
    const client = await authorizeWith(STARTER, ['runs:read', 'runs:write'], MCP_URL)
    const res = await a2aRpc(client.saved!.access_token, 'GetTask', { id: NO_RUN })
    expect(res.status).toBe(401)
    expect(res.headers.get('WWW-Authenticate')).toContain('oauth-protected-resource/a2a')
    expect(await res.json()).toMatchObject({ error: { code: -32600 } })
  })

  it('a token without the scope a method needs: a JSON-RPC error naming it', async () => {
    const client = await authorizeWith(STARTER, ['runs:read'], A2A_URL)
    const token = client.saved!.access_token
    // Reading is what it was granted…
    expect((await (await a2aRpc(token, 'GetTask', { id: NO_RUN })).json()) as object).toMatchObject(
      { error: { code: -32001 } },
    )
    // …starting a task is not.
    const res = await a2aRpc(token, 'SendMessage', {
      message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] },
      configuration: { returnImmediately: true },
    })
    expect(await res.json()).toMatchObject({
      error: {
        code: -32004,
        message:
          'token "starter" lacks the scope runs:write, which starting a task needs; authorize this client again with it',
      },
    })
  })
})
