import type { ConsentDescription } from '@cloudflare/workers-oauth-provider'
import { SCOPES } from '../../security/api-tokens'
import { escapeHtml, htmlPage } from './html-page'

/**
 * The page where a person lets an OAuth client act for one of their API tokens: who asks (a
 * registered client's name is its own claim), where the tokens go, a field for the API token,
 * and the scopes to grant, the requested ones ticked. Everything the client chose is escaped.
 */
export function consentPage(details: ConsentDescription, handle: string): string {
  const name = escapeHtml(details.clientName)
  const origin = details.clientDomain
    ? `Published by <strong>${escapeHtml(details.clientDomain)}</strong>.`
    : 'This app registered itself; its name is not verified.'
  const loopback = details.redirectIsLoopback
    ? '<p class="warn"><strong>This sends access to an app on your computer.</strong> Continue only if you just started signing in from it.</p>'
    : ''
  const scopes = SCOPES.map(
    (scope) =>
      `<label><input type="checkbox" name="scope" value="${scope}"${
        details.scope.includes(scope) ? ' checked' : ''
      }> ${scope}</label>`,
  ).join('\n    ')
  return htmlPage({
    title: `Authorize ${details.clientName}`,
    style: `
  label { display: block; }
  input[type=password] { width: 100%; font: inherit; padding: .4rem; }
  fieldset { margin: 1rem 0; }
  .warn { border-left: 4px solid #c60; padding-left: .75rem; }
  button { font: inherit; padding: .4rem 1rem; margin-right: .5rem; }`,
    body: `<h1>Allow ${name} to use edgeloop for you?</h1>
<p>${origin} Access will be sent to <strong>${escapeHtml(details.redirectHost)}</strong>.</p>
${loopback}
<form method="post">
  <input type="hidden" name="handle" value="${escapeHtml(handle)}">
  <label for="token">Your edgeloop API token (it proves who you are; it is not given to the app)</label>
  <input id="token" type="password" name="token" autocomplete="off" required>
  <fieldset>
    <legend>What the app may do: at most what your token may do</legend>
    ${scopes}
  </fieldset>
  <button name="decision" value="approve">Allow</button>
  <button name="decision" value="deny" formnovalidate>Deny</button>
</form>`,
  })
}
