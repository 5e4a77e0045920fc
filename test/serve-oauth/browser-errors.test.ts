/**
 * What a person meets in the browser at the authorization endpoint when something is wrong
 * (docs/serving.md#errors): a page that says what and what to do, with the status the JSON error
 * has; API callers keep the JSON error, and a refusal RFC 6749 sends back to the client
 * (`error=` on the checked redirect URI) is still a redirect, whatever the Accept.
 */
import { describe, expect, it } from 'vitest'
import { fetchWith } from '../service/worker-with'
import {
  answerConsent,
  MemoryClient,
  openConsent,
  REDIRECT,
  startAuthorization,
  workerFetch,
} from './oauth-client'

const STARTER = 'test-starter-token'
// What Chromium and Firefox send when they load a page or post a form.
const BROWSER = {
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8',
}

/** The page's text without its markup, as a person reads it. */
async function pageText(res: Response): Promise<string> {
  expect(res.headers.get('Content-Type')).toBe('text/html; charset=utf-8')
  expect(res.headers.get('Cache-Control')).toBe('no-store')
  expect(res.headers.get('Content-Security-Policy')).toContain("default-src 'none'")
  expect(res.headers.get('Location')).toBeNull()
  const html = await res.text()
  expect(html).toMatch(/^<!doctype html>/)
  return html
    .replace(/<style>[\s\S]*?<\/style>/, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ')
}

async function authorizationUrl(change: (url: URL) => void = () => {}): Promise<URL> {
  const url = await startAuthorization(new MemoryClient())
  change(url)
  return url
}

describe('an authorization request a person opens in the browser', () => {
  it.each([
    [
      'an unknown client',
      (u: URL) => u.searchParams.set('client_id', 'no-such-client'),
      'Invalid client_id',
    ],
    ['no client_id', (u: URL) => u.searchParams.delete('client_id'), 'client_id is required'],
    [
      'a redirect URI the client did not register',
      (u: URL) => u.searchParams.set('redirect_uri', 'https://attacker.test/callback'),
      'Invalid redirect URI',
    ],
  ])('%s: a 400 page that says so and to start again from the app', async (_l, change, says) => {
    const url = await authorizationUrl(change)
    const page = await pageText(await workerFetch(url, { headers: BROWSER, redirect: 'manual' }))
    expect(page).toContain(says)
    expect(page).toContain('start signing in again')
    expect(page).toContain('invalid_request (HTTP 400)')
    // Everything else asking the same (no Accept, JSON, any type) keeps the JSON error.
    for (const accept of [undefined, 'application/json', '*/*']) {
      const res = await workerFetch(url, {
        headers: accept ? { accept } : {},
        redirect: 'manual',
      })
      expect(res.status).toBe(400)
      expect(await res.json()).toMatchObject({ error: { code: 'invalid_request' } })
    }
  })

  it('a refusal after the redirect URI was checked still goes back to the client (RFC 6749)', async () => {
    const url = await authorizationUrl((u) => u.searchParams.set('response_type', 'token'))
    const res = await workerFetch(url, { headers: BROWSER, redirect: 'manual' })
    expect(res.status).toBe(302)
    const location = new URL(res.headers.get('Location')!)
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT)
    expect(location.searchParams.get('error')).toBe('unsupported_response_type')
    expect(location.searchParams.get('state')).toBe('state-123')
  })

  it('without PUBLIC_URL: a 404 page that says to ask the operator; JSON for API callers', async () => {
    const off = { PUBLIC_URL: undefined }
    const page = await pageText(await fetchWith(off, '/authorize', { headers: BROWSER }))
    expect(page).toContain('needs PUBLIC_URL')
    expect(page).toContain('ask its operator')
    expect(page).toContain('oauth_not_configured (HTTP 404)')
    const api = await fetchWith(off, '/authorize')
    expect(api.status).toBe(404)
    expect(await api.json()).toMatchObject({ error: { code: 'oauth_not_configured' } })
  })
})

describe('the consent form a person sends from the browser', () => {
  it('a wrong token: a 401 page that says to correct the form, which then still works', async () => {
    const url = await authorizationUrl()
    const consent = await openConsent(url)
    const res = await answerConsent(url, consent, { token: 'nope', scopes: ['runs:read'] }, BROWSER)
    expect(res.status).toBe(401)
    const page = await pageText(res)
    expect(page).toContain(
      "What is wrong: that is not a valid edgeloop API token; paste one of this deployment's API tokens",
    )
    expect(page).toContain('correct it, and send it again')
    const right = await answerConsent(
      url,
      consent,
      { token: STARTER, scopes: ['runs:read'] },
      BROWSER,
    )
    expect(right.status).toBe(302)
    expect(right.headers.get('Location')).toMatch(/[?&]code=/)
  })

  it('scopes beyond the token: a 403 page naming them', async () => {
    const url = await authorizationUrl()
    const consent = await openConsent(url)
    const scopes = ['runs:read', 'service:read']
    const res = await answerConsent(url, consent, { token: STARTER, scopes }, BROWSER)
    expect(res.status).toBe(403)
    expect(await pageText(res)).toContain('does not hold service:read')
  })

  it('a form sent again after it was used: a 400 page that says to start again', async () => {
    const url = await authorizationUrl()
    const consent = await openConsent(url)
    const fields = { token: STARTER, scopes: ['runs:read'] }
    expect((await answerConsent(url, consent, fields, BROWSER)).status).toBe(302)
    const again = await answerConsent(url, consent, fields, BROWSER)
    expect(again.status).toBe(400)
    const page = await pageText(again)
    expect(page).toContain('expired or was already used')
    expect(page).toContain('start signing in again')
    // The same refusal for an API caller: edgeloop's JSON error.
    const json = await answerConsent(url, consent, fields)
    expect(json.status).toBe(400)
    expect(await json.json()).toMatchObject({ error: { code: 'invalid_request' } })
  })
})
