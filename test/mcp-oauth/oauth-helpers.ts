/**
 * What the OAuth tests share: the fakes of the mcp-oauth project (vitest.config.ts), a person's
 * browser following a connect link to the end, and what is stored in D1.
 */
import { env } from 'cloudflare:test'
import { beforeEach, expect } from 'vitest'
import { FakeAuthServer, protectedMcp } from '../fakes/fake-oauth'
import type { FakeMcp } from '../fakes/fake-mcp'
import type { FakeHandler } from '../fakes/outbound'
import type { Env } from '../../src/env'
import { api, ORIGIN, useServiceFakes } from '../service/harness'
import { fetchWith } from '../service/worker-with'

export const APPROVER = { authorization: 'Bearer test-approver-token' }
export const ALPHA = { authorization: 'Bearer test-alpha-token' }

export interface OAuthFakes {
  auth: FakeAuthServer
  tracker: FakeMcp
  wiki: FakeMcp
  m2m: FakeMcp
  /** What the wiki server asks for (`scope`: a 403 insufficient_scope without it). */
  wikiAccess: { scope?: string }
}

/**
 * The service's fakes with the authorization server and its three MCP servers (and `extra`
 * hosts, e.g. the fake Slack Web API).
 */
export function useOAuthFakes(extra: () => Record<string, FakeHandler> = () => ({})) {
  const current = {} as OAuthFakes
  const fakes = useServiceFakes({
    hosts: () => {
      const auth = new FakeAuthServer()
      auth.secrets.set('edgeloop-m2m', 'm2m-client-secret-0123456789')
      auth.publicKeys.set(
        'edgeloop-keyed',
        JSON.parse((env as unknown as Record<string, string>).KEYED_PUBLIC_JWK!),
      )
      const tracker = protectedMcp(auth, 'tracker.test')
      const wiki = protectedMcp(auth, 'wiki.test')
      const m2m = protectedMcp(auth, 'm2m.test')
      const keyed = protectedMcp(auth, 'keyed.test')
      Object.assign(current, {
        auth,
        tracker: tracker.mcp,
        wiki: wiki.mcp,
        m2m: m2m.mcp,
        wikiAccess: wiki.access,
      })
      return {
        'auth.test': auth.handler,
        'tracker.test': tracker.handler,
        'wiki.test': wiki.handler,
        'm2m.test': m2m.handler,
        'keyed.test': keyed.handler,
        ...extra(),
      }
    },
  })
  // Each test gets a new authorization server: what the last one registered and granted goes.
  beforeEach(async () => {
    for (const table of ['mcp_connections', 'mcp_oauth_clients', 'mcp_authorizations']) {
      await env.RUN_INDEX.prepare(`DELETE FROM ${table}`)
        .run()
        .catch(() => undefined)
    }
  })
  return { fakes, oauth: current }
}

/** `POST /v1/connections/:server/link` as `headers`' token; the link (asserts the 201). */
export async function connectLink(
  server: string,
  headers: Record<string, string>,
  body: Record<string, unknown> = {},
): Promise<string> {
  const res = await api(`/v1/connections/${server}/link`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const json = (await res.json()) as { url: string }
  expect(res.status, JSON.stringify(json)).toBe(201)
  return json.url
}

/** What a browser holds between the link and the callback. */
export interface Browser {
  cookie: string
  /** Where the authorization server sent it back (the callback URL with code, state, iss). */
  callback: URL
  /** The authorization request it was sent to. */
  authorize: URL
}

/** Follows a link as a browser does, through the authorization server's consent, to the callback. */
export async function followLink(link: string, auth: FakeAuthServer): Promise<Browser> {
  const res = await api(new URL(link).pathname, { redirect: 'manual' })
  expect(res.status, await res.clone().text()).toBe(302)
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!
  const authorize = new URL(res.headers.get('location')!)
  const consent = await auth.handler(new Request(authorize))
  expect(consent.status, await consent.clone().text()).toBe(302)
  return { cookie, callback: new URL(consent.headers.get('location')!), authorize }
}

/**
 * A person's grant from link to callback (asserts the callback's 200): `server` connected as
 * `headers`' token, for a run's item when given.
 */
export async function grantConnection(
  server: string,
  auth: FakeAuthServer,
  headers: Record<string, string>,
  item?: { runId: string; itemId: string },
): Promise<Browser> {
  const browser = await followLink(await connectLink(server, headers, item), auth)
  const res = await callback(browser.callback, browser.cookie)
  expect(res.status, await res.clone().text()).toBe(200)
  return browser
}

/**
 * The approver's grant of the wiki server from link to callback with the Worker's routes under
 * `settings` (fetchWith): the authorization request, and the callback's answer.
 */
export async function grantWikiWith(
  settings: Partial<Record<keyof Env, string | undefined>>,
  auth: FakeAuthServer,
): Promise<{ authorize: URL; callback: Response }> {
  const linked = await fetchWith(settings, '/v1/connections/wiki/link', {
    method: 'POST',
    headers: { ...APPROVER, 'content-type': 'application/json' },
    body: '{}',
  })
  expect(linked.status).toBe(201)
  const link = new URL(((await linked.json()) as { url: string }).url)
  const followed = await fetchWith(settings, link.pathname, { redirect: 'manual' })
  expect(followed.status, await followed.clone().text()).toBe(302)
  const cookie = followed.headers.get('set-cookie')!.split(';')[0]!
  const authorize = new URL(followed.headers.get('location')!)
  const consent = await auth.handler(new Request(authorize))
  expect(consent.status, await consent.clone().text()).toBe(302)
  const back = new URL(consent.headers.get('location')!)
  const callback = await fetchWith(settings, `${back.pathname}${back.search}`, {
    headers: { cookie },
  })
  return { authorize, callback }
}

/** The callback request the browser makes (path and query on the Worker). */
export function callback(url: URL, cookie?: string): Promise<Response> {
  expect(url.origin).toBe(ORIGIN)
  return api(`${url.pathname}${url.search}`, cookie ? { headers: { cookie } } : {})
}

/** Every stored row of the connections' tables, as text: to look for a token in it. */
export async function storedText(): Promise<string> {
  const rows = await Promise.all(
    ['mcp_connections', 'mcp_oauth_clients', 'mcp_authorizations'].map((t) =>
      env.RUN_INDEX.prepare(`SELECT * FROM ${t}`)
        .all()
        .then((r) => r.results)
        .catch(() => []),
    ),
  )
  return JSON.stringify(rows)
}

export async function connectionList(): Promise<Record<string, unknown>[]> {
  const res = await api('/v1/connections', { headers: APPROVER })
  expect(res.status).toBe(200)
  return ((await res.json()) as { connections: Record<string, unknown>[] }).connections
}
