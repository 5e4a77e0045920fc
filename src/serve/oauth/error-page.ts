import { escapeHtml, htmlPage, htmlResponse } from './html-page'

/** Who can mend a refusal a person meets in the browser, and so what the page tells them. */
export type Remedy = 'correct_form' | 'start_again' | 'operator'

const ADVICE: Record<Remedy, string> = {
  correct_form:
    'Nothing was granted. Go back to the form (your browser’s Back button), correct it, and send it again.',
  start_again:
    'Nothing was granted. Go back to the app you were signing in from and start signing in again. If this page comes back, the app’s sign-in link is at fault: tell whoever runs the app.',
  operator:
    'Nothing was granted. Signing in apps is not set up on this deployment: ask its operator.',
}

/**
 * The page a person's browser gets for a refusal of the authorization endpoint: what is wrong
 * (`message`, escaped), what to do next, and the OAuth or edgeloop `code` for whoever helps.
 * Never cached; `headers` kept (the consent cookies).
 */
export function errorPage(input: {
  status: number
  code: string
  message: string
  remedy: Remedy
  headers?: Headers | undefined
}): Response {
  const html = htmlPage({
    title: 'Sign-in stopped',
    style: `
  code { background: #eee; padding: 0 .25rem; }`,
    body: `<h1>This sign-in could not go on</h1>
<p><strong>What is wrong:</strong> ${escapeHtml(input.message)}</p>
<p>${escapeHtml(ADVICE[input.remedy])}</p>
<p>Error: <code>${escapeHtml(input.code)}</code> (HTTP ${input.status})</p>`,
  })
  const response = htmlResponse(input.status, html, input.headers)
  response.headers.set('Cache-Control', 'no-store')
  return response
}
