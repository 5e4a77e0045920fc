/**
 * The pages a person's browser gets from the authorization endpoint (the consent page, an error
 * page): one frame, one escaping, one Content-Security-Policy (no script, inline style only).
 */

/** `value` as HTML text or an attribute value: every character that could start markup escaped. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** A whole page: `title` (escaped here), `style` rules added to the shared ones, `body` as HTML. */
export function htmlPage(input: { title: string; style?: string; body: string }): string {
  return `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(input.title)} · edgeloop</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 34rem; margin: 3rem auto; padding: 0 1rem; }${input.style ?? ''}
</style>
${input.body}
</html>
`
}

/** A page's answer: `headers` kept (the consent cookies), the page's type and policy set. */
export function htmlResponse(status: number, html: string, headers?: Headers): Response {
  const out = new Headers(headers)
  out.set('Content-Type', 'text/html; charset=utf-8')
  out.set(
    'Content-Security-Policy',
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  )
  return new Response(html, { status, headers: out })
}
