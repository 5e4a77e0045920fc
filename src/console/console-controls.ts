/**
 * The console's controls that change a run (Approve / Deny, Cancel, Delete), offered only when the
 * token's scopes allow them, as `GET /v1/me` tells. The server still checks every request; this
 * spares a click it would refuse with 403, and says in one line which scope is missing.
 *
 * A piece of the console script's one closure (console-script.ts joins it in): function
 * declarations only, using that closure's `el`, `api`, `json`, `showError`, `refreshRun` and
 * `runDeleted`.
 */
export const CONSOLE_CONTROLS = String.raw`
  // Who the token is: loaded once after the token is given, shown in the header.
  function tokenAccess(who) {
    var me = null
    return {
      load: function () {
        return json('/v1/me').then(function (answer) {
          me = answer
          who.textContent = answer.name + ' · ' + (answer.scopes.join(', ') || 'no scopes')
          // On a phone the line is cut with an ellipsis; the whole of it stays a tap away.
          who.title = who.textContent
          who.dataset.token = answer.name
        })
      },
      forget: function () {
        me = null
        who.textContent = ''
        delete who.dataset.token
      },
      known: function () { return me !== null },
      may: function (scope) { return me !== null && me.scopes.indexOf(scope) >= 0 },
      // The one line shown in place of a control the token may not use.
      missing: function (what, scope) {
        return el('p', { class: 'needs', 'data-testid': 'needs-scope', 'data-scope': scope,
          text: what + ' needs ' + scope + (me ? ' (token "' + me.name + '" has ' + (me.scopes.join(', ') || 'no scopes') + ')' : '') })
      },
    }
  }

  // Approve / Deny of a pending call: they send the arguments hash shown with it.
  function decisionControls(view, a) {
    if (!access.may('approvals:write')) return access.missing('Approve / Deny', 'approvals:write')
    function send(decision) {
      return function () {
        json('/v1/runs/' + view.id + '/approvals/' + encodeURIComponent(a.callId), {
          method: 'POST',
          // The decider is the token's name (the server records it); the body names no one.
          body: JSON.stringify({ decision: decision, args_hash: a.argsHash }),
        }).then(refreshRun).catch(function (e) { showError(e.message) })
      }
    }
    return el('div', { class: 'decide' },
      el('button', { class: 'approve', text: 'Approve', onclick: send('approve') }),
      el('span', { text: ' ' }),
      el('button', { class: 'deny', text: 'Deny', onclick: send('deny') }))
  }

  // Cancel of a run that has not finished: it stops at its next transition.
  function cancelControl(view) {
    if (!access.may('runs:write')) return access.missing('Cancel', 'runs:write')
    var button = el('button', { class: 'cancel', 'data-testid': 'cancel', text: 'Cancel run', onclick: function () {
      button.disabled = true
      json('/v1/runs/' + view.id + '/cancel', { method: 'POST', body: '{}' }).then(refreshRun).catch(function (e) {
        button.disabled = false
        showError(e.message)
      })
    } })
    return button
  }

  // Delete of a run and everything it stored: shown only to a token with runs:delete (a
  // service without deletion has no such scope), and asked twice.
  function deleteControl(view) {
    if (!access.may('runs:delete')) return null
    var box = el('span', { class: 'delete-control' })
    function offer() {
      box.replaceChildren(el('button', { class: 'delete', 'data-testid': 'delete', text: 'Delete run', onclick: ask }))
    }
    function ask() {
      box.replaceChildren(
        el('span', { class: 'confirm', text: 'Delete this run, its steps, observations and events for good? ' }),
        el('button', { class: 'deny', 'data-testid': 'delete-confirm', text: 'Delete', onclick: remove }),
        el('span', { text: ' ' }),
        el('button', { 'data-testid': 'delete-keep', text: 'Keep', onclick: offer }))
    }
    function remove() {
      box.querySelectorAll('button').forEach(function (b) { b.disabled = true })
      api('/v1/runs/' + view.id, { method: 'DELETE' }).then(function () { runDeleted(view.id) }).catch(function (e) {
        offer()
        showError(e.message)
      })
    }
    offer()
    return box
  }
`
