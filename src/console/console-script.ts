import { CONSOLE_CONTROLS } from './console-controls'

/**
 * The console's browser script, served as /console/console.js. Plain JavaScript (no build step,
 * no template literals inside, so it can live in this string). Everything it shows is set as
 * text, never as HTML: run data cannot inject markup. The controls that change a run, and what
 * the token may do, are in console-controls.ts, joined into the same closure.
 */
export const CONSOLE_SCRIPT =
  String.raw`'use strict'
;(function () {
  var KEY = 'edgeloop.token'
  var token = sessionStorage.getItem(KEY)
  var filter = ''
  var cursor = null
  var selected = null
  var stream = null
  var refreshTimer = null
  var listTimer = null
  var shown = null
  // The open run's view as last drawn (JSON): a refresh that brings nothing new leaves the
  // timeline alone, so a click on it is not lost to a redraw of the same content.
  var drawn = null
  // Whole observations already read ("read more"), by handle: a redraw of the timeline (when the
  // run changed) keeps them open.
  var whole = {}
  // The token's name and scopes (GET /v1/me), asked once when the token is given.
  var access = tokenAccess($('who'))

  function $(id) { return document.getElementById(id) }
  function el(tag, attrs) {
    var node = document.createElement(tag)
    for (var k in attrs || {}) {
      if (k === 'text') node.textContent = attrs[k]
      else if (k === 'onclick') node.addEventListener('click', attrs[k])
      else node.setAttribute(k, attrs[k])
    }
    for (var i = 2; i < arguments.length; i++) if (arguments[i]) node.append(arguments[i])
    return node
  }
  function showError(message) {
    var box = $('error')
    box.textContent = message
    box.hidden = false
    setTimeout(function () { box.hidden = true }, 6000)
  }

  function api(path, init) {
    init = init || {}
    var headers = Object.assign({ Authorization: 'Bearer ' + token }, init.headers || {})
    if (init.body) headers['Content-Type'] = 'application/json'
    return fetch(path, Object.assign({}, init, { headers: headers })).then(function (res) {
      if (res.status === 401) { signOut(); throw new Error('the API token was refused') }
      if (!res.ok) {
        return res.json().then(function (b) {
          throw new Error((b.error && b.error.code) + ': ' + (b.error && b.error.message))
        })
      }
      return res
    })
  }
  function json(path, init) { return api(path, init).then(function (r) { return r.json() }) }

  function signOut() {
    sessionStorage.removeItem(KEY)
    token = null
    access.forget()
    if (stream) stream.abort()
    start()
  }

  function start() {
    $('login').hidden = !!token
    $('app').hidden = !token
    $('sign-out').hidden = !token
    if (!token) return $('token').focus()
    enter()
  }

  // Who the token is first (the run panel offers only what it may do), then what it may read.
  function enter() {
    return access.load().then(function () {
      if (!access.may('runs:read')) return $('run-panel').replaceChildren(access.missing('Reading runs', 'runs:read'))
      loadRuns(true)
      loadInbox()
      var fromHash = /run=([\w]+)/.exec(location.hash)
      if (fromHash) openRun(fromHash[1])
    }).catch(function (e) { showError(e.message) })
  }

  $('login').addEventListener('submit', function (e) {
    e.preventDefault()
    token = $('token').value.trim()
    $('token').value = ''
    sessionStorage.setItem(KEY, token)
    start()
  })
  $('sign-out').addEventListener('click', signOut)
  Array.prototype.forEach.call(document.querySelectorAll('#filters button'), function (b) {
    b.addEventListener('click', function () { filter = b.dataset.status; loadRuns(true) })
  })
  $('more').addEventListener('click', function () { loadRuns(false) })

  function loadRuns(reset) {
    if (reset) cursor = null
    var q = '?limit=25' + (filter ? '&status=' + filter : '') + (cursor ? '&cursor=' + encodeURIComponent(cursor) : '')
    Array.prototype.forEach.call(document.querySelectorAll('#filters button'), function (b) {
      b.classList.toggle('active', b.dataset.status === filter)
    })
    return json('/v1/runs' + q).then(function (page) {
      var list = $('runs')
      if (reset) list.replaceChildren()
      page.items.forEach(function (run) {
        list.append(el('li', { 'data-run': run.id, class: run.id === selected ? 'selected' : '', onclick: function () { openRun(run.id) } },
          el('span', { class: 'status ' + run.status, text: run.status.replace('_', ' ') }),
          el('span', { text: run.task }),
          el('div', { class: 'meta', text: run.stepCount + ' steps · ' + new Date(run.updatedAt).toLocaleString() + ' · ' + run.requestedBy })))
      })
      cursor = page.nextCursor
      $('more').hidden = !cursor
      if (shown) patchLists(shown)
    }).catch(function (e) { showError(e.message) })
  }

  function loadInbox() {
    return json('/v1/approvals').then(function (page) {
      $('inbox').replaceChildren.apply($('inbox'), page.items.map(function (a) {
        return el('li', { 'data-run': a.runId, 'data-call': a.callId, onclick: function () { openRun(a.runId) } },
          el('strong', { text: a.tool }), el('span', { text: ' ' + JSON.stringify(a.args) }),
          el('div', { class: 'meta', text: a.runId + ' · expires ' + new Date(a.expiresAt).toLocaleString() }))
      }))
      if (shown) patchLists(shown)
      if (!$('inbox').children.length) $('inbox').append(el('li', { class: 'hint', text: 'None waiting.' }))
    }).catch(function (e) { showError(e.message) })
  }

  function openRun(id) {
    selected = id
    drawn = null
    location.hash = 'run=' + id
    Array.prototype.forEach.call(document.querySelectorAll('#runs li'), function (li) {
      li.classList.toggle('selected', li.dataset.run === id)
    })
    if (stream) stream.abort()
    stream = new AbortController()
    follow(id, 0, stream.signal)
    return refreshRun()
  }

  function refreshRun() {
    var id = selected
    if (!id) return
    return json('/v1/runs/' + id).then(function (view) {
      if (id !== selected) return
      shown = view
      var text = JSON.stringify(view)
      if (text !== drawn) renderRun(view)
      drawn = text
      patchLists(view)
    }).catch(function (e) { showError(e.message) })
  }

  // The run list and the inbox come from the run index, which may lag the run by a moment:
  // the open run's own view (read from the run itself) corrects its row and its approvals.
  function patchLists(view) {
    var row = document.querySelector('#runs li[data-run="' + view.id + '"] .status')
    if (row) {
      row.className = 'status ' + view.status
      row.textContent = view.status.replace('_', ' ')
    }
    var pending = view.pendingApprovals.map(function (a) { return a.callId })
    Array.prototype.forEach.call(document.querySelectorAll('#inbox li[data-run="' + view.id + '"]'), function (li) {
      if (pending.indexOf(li.dataset.call) < 0) li.remove()
    })
  }

  // Each event refreshes the run view once (events that come together are one refresh); a
  // change of status also reloads the lists, now and once more when the index has caught up.
  function onEvent(event) {
    clearTimeout(refreshTimer)
    refreshTimer = setTimeout(function () {
      refreshRun()
      if (event.type === 'approval_requested' || event.type === 'approval_decided' || event.type === 'run_finished' || event.type === 'step_started') {
        clearTimeout(listTimer)
        loadRuns(true).then(loadInbox)
        listTimer = setTimeout(function () { loadRuns(true).then(loadInbox) }, 2000)
      }
    }, 150)
  }

  // The event stream, read with fetch (EventSource cannot send the Authorization header);
  // reconnects after the last event seen until run_finished.
  function follow(id, after, signal) {
    var headers = after ? { 'Last-Event-ID': String(after) } : {}
    api('/v1/runs/' + id + '/events', { headers: headers, signal: signal }).then(function (res) {
      var reader = res.body.getReader()
      var decoder = new TextDecoder()
      var buffer = ''
      var finished = false
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) {
            if (!finished && !signal.aborted) setTimeout(function () { follow(id, after, signal) }, 1000)
            return
          }
          buffer += decoder.decode(chunk.value, { stream: true })
          var end
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            var frame = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            var data = frame.split('\n').filter(function (l) { return l.indexOf('data: ') === 0 }).map(function (l) { return l.slice(6) }).join('\n')
            if (!data) continue
            var event = JSON.parse(data)
            after = event.seq
            if (event.type === 'run_finished') finished = true
            document.body.dataset.lastEvent = event.type
            onEvent(event)
          }
          return pump()
        })
      }
      return pump()
    }).catch(function (e) {
      if (!signal.aborted) { showError(e.message); setTimeout(function () { follow(id, after, signal) }, 3000) }
    })
  }

  function money(usd) { return usd === undefined ? '' : ' · $' + usd.toFixed(4) }

  function renderRun(view) {
    var r = view.result
    var panel = $('run-panel')
    var usage = r.usage
    panel.replaceChildren(
      el('h2', {}, el('span', { class: 'status ' + view.status, 'data-testid': 'run-status', text: view.status.replace('_', ' ') }), el('span', { text: view.task })),
      el('div', { class: 'meta', 'data-testid': 'run-usage', text: view.id + ' · ' + usage.promptTokens + ' prompt + ' + usage.completionTokens + ' completion tokens · ' + usage.activeMs + ' ms active' + money(usage.costUsd) + (r.model ? ' · ' + r.model : '') }))
    if (view.status === 'running' || view.status === 'awaiting_approval') panel.append(cancelControl(view))
    r.steps.forEach(function (step) { panel.append(renderStep(view, step)) })
    view.pendingApprovals.forEach(function (a) { panel.append(renderApproval(view, a)) })
    if (view.status === 'succeeded') panel.append(el('div', { class: 'answer', 'data-testid': 'answer', text: r.answer }))
    if (view.status === 'failed') panel.append(el('div', { class: 'failure', 'data-testid': 'failure', text: r.stopReason + (r.error ? ': ' + r.error : '') }))
  }

  function renderStep(view, step) {
    var box = el('div', { class: 'step', 'data-step': String(step.i) },
      el('div', { class: 'meta', text: 'Step ' + (step.i + 1) + ' · ' + step.kind + ' · ' + step.promptTokens + ' + ' + step.completionTokens + ' tokens' + (step.estimated ? ' (estimated)' : '') + ' · ' + step.ms + ' ms (model ' + step.modelMs + ' ms)' + money(step.costUsd) }),
      step.thought ? el('div', { class: 'thought', text: step.thought }) : null,
      step.formatError ? el('pre', { text: step.formatError }) : null)
    step.calls.forEach(function (call) {
      var full = call.handle ? whole[view.id + ' ' + call.handle] : undefined
      var obs = el('pre', { class: 'observation', text: full !== undefined ? full : call.observation || '(' + call.status + ')' })
      var more = null
      if (call.truncated && call.handle && full === undefined) {
        more = el('button', { class: 'read-more', text: 'read more (' + call.originalSize + ' characters)', onclick: function () {
          json('/v1/runs/' + view.id + '/observations/' + encodeURIComponent(call.handle)).then(function (o) {
            whole[view.id + ' ' + call.handle] = o.text
            // The timeline may have been redrawn while this loaded: open the call as it is shown
            // now, not the one this button belonged to.
            if (selected !== view.id) return
            var shownCall = document.querySelector('#run-panel .step[data-step="' + step.i +
              '"] .call[data-call="' + CSS.escape(call.id) + '"]')
            if (!shownCall) return
            shownCall.querySelector('.observation').textContent = o.text
            var button = shownCall.querySelector('button.read-more')
            if (button) button.remove()
          }).catch(function (e) { showError(e.message) })
        } })
      }
      box.append(el('div', { class: 'call', 'data-call': call.id },
        el('strong', { text: call.name }),
        el('span', { class: 'meta', text: ' ' + call.status + (call.kind ? ' · ' + call.kind : '') + ' · ' + call.ms + ' ms' + (call.approval && call.approval.decidedBy ? ' · ' + call.approval.decision + ' by ' + call.approval.decidedBy : '') }),
        el('pre', { class: 'args', text: JSON.stringify(call.args, null, 2) }),
        obs, more))
    })
    return box
  }

  function renderApproval(view, a) {
    return el('div', { class: 'approval', 'data-testid': 'approval', 'data-call': a.callId },
      el('strong', { text: 'Approve ' + a.tool + '?' }),
      el('pre', { text: JSON.stringify(a.args, null, 2) }),
      el('div', { class: 'thought', text: a.reason }),
      el('div', { class: 'meta' }, el('span', { text: 'arguments hash ' }), el('code', { 'data-testid': 'args-hash', text: a.argsHash }), el('span', { text: ' · expires ' + new Date(a.expiresAt).toLocaleString() })),
      decisionControls(view, a))
  }
` +
  CONSOLE_CONTROLS +
  String.raw`
  start()
  setInterval(function () {
    if (!token) return
    // A /v1/me that failed (not a refused token: that signs out) is asked again.
    if (!access.known()) return enter()
    if (access.may('runs:read')) { loadRuns(true); loadInbox() }
  }, 10000)
})()
`
