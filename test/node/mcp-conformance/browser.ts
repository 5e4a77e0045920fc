/**
 * A person's browser, as far as an OAuth grant needs one: it opens a URL and follows every
 * redirect (the connect link → the authorization server → the Worker's callback), keeping the
 * cookies each origin sets and sending them back to it. The conformance suite's authorization
 * server approves at once, so no page is filled in on the way.
 */

/** Where the browser ended up, and what that page answered. */
export interface Landing {
  url: string
  status: number
  body: string
}

const MAX_HOPS = 10

/** Opens `url` and follows redirects (at most ten) until a page answers. */
export async function browse(url: string): Promise<Landing> {
  const jar = new Map<string, Map<string, string>>()
  let at = new URL(url)
  for (let hop = 0; hop <= MAX_HOPS; hop++) {
    const cookies = jar.get(at.origin)
    const res = await fetch(at, {
      redirect: 'manual',
      headers: cookies?.size
        ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') }
        : {},
    })
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair!.indexOf('=')
      if (eq < 1) continue
      const origin = jar.get(at.origin) ?? new Map<string, string>()
      origin.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim())
      jar.set(at.origin, origin)
    }
    const location = res.headers.get('location')
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel()
      at = new URL(location, at)
      continue
    }
    return { url: at.href, status: res.status, body: await res.text() }
  }
  throw new Error(`more than ${MAX_HOPS} redirects from ${url}`)
}
