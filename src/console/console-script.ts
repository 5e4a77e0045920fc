import { CONSOLE_CONNECTIONS } from './console-connections'
import { CONSOLE_CONTROLS } from './console-controls'
import { CONSOLE_EVENT_STREAM } from './console-event-stream'
import { CONSOLE_LIST_STREAM } from './console-list-stream'
import { CONSOLE_FAMILY } from './console-family'
import { CONSOLE_INBOX_ACTIONS } from './console-inbox-actions'
import { CONSOLE_RUN_LIST } from './console-run-list'
import { CONSOLE_START_FORM } from './console-start-form'
import { CONSOLE_STEP_CHART } from './console-step-chart'
import { CONSOLE_TIMELINE } from './console-timeline'

/**
 * The console's browser script, served as /console/console.js. Plain JavaScript (no build step,
 * no template literals inside, so it can live in this string). Everything it shows is set as
 * text, never as HTML: run data cannot inject markup. Its pieces (the list and its stream, the
 * timeline, the chart, the controls, the start form, the event stream) are joined into this one
 * closure.
 */
export const CONSOLE_SCRIPT =
  String.raw`'use strict'
;(function () {
  var KEY = 'edgeloop.token'
  var token = sessionStorage.getItem(KEY)
  var selected = null
  var stream = null
  var shown = null
  // The open run's view as last drawn (JSON): a refresh that brings nothing new leaves the
  // timeline alone, so a click on it is not lost to a redraw of the same content.
  var drawn = null
  // Runs whose view is due to be read again (their events come in bursts), by run id.
  var due = {}
  // The token's name and scopes (GET /v1/me), asked once when the token is given.
  var access = tokenAccess($('who'))
  // How often the index is asked while the run-list stream is down (console-list-stream.ts);
  // while it is live, rows change from it and from the followed runs' events.
  var POLL_MS = 3000

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
    clearTimeout(box.timer)
    box.timer = setTimeout(function () { box.hidden = true }, 6000)
  }

  // Reads the page makes by itself (the followed runs' streams, the poll, a run read after its
  // events) retry by themselves: when the service is out of reach for a moment (a restart, a
  // dropped connection) they say nothing, and only an outage longer than OUTAGE_MS is shown.
  // An answer from the service ends the outage. What a person clicks shows its failure at once.
  var OUTAGE_MS = 20000
  var outage = null
  function unreachable(e) {
    // The service answered (a refusal, an error of its own): not an outage.
    if (e.status) return showError(e.message)
    var now = Date.now()
    if (!outage) outage = { since: now, shown: false }
    if (outage.shown || now - outage.since < OUTAGE_MS) return
    outage.shown = true
    showError('the service has been out of reach for ' + Math.round((now - outage.since) / 1000) +
      ' s (' + e.message + '); still trying')
  }
  function reachable() {
    if (outage && outage.shown) $('error').hidden = true
    outage = null
  }

  function api(path, init) {
    init = init || {}
    var headers = Object.assign({ Authorization: 'Bearer ' + token }, init.headers || {})
    if (init.body) headers['Content-Type'] = 'application/json'
    return fetch(path, Object.assign({}, init, { headers: headers })).then(function (res) {
      reachable()
      if (res.status === 401) { signOut(); throw new Error('the API token was refused') }
      if (!res.ok) {
        return res.json().then(function (b) {
          var err = new Error((b.error && b.error.code) + ': ' + (b.error && b.error.message))
          err.status = res.status
          throw err
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
    stopFollowing()
    stopWatchingList()
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
  // again: the poll asking once more after a failure (already shown), so a failure is quiet.
  function enter(again) {
    return access.load().then(function () {
      if (!access.may('runs:read')) return $('run-panel').replaceChildren(access.missing('Reading runs', 'runs:read'))
      showStartForm()
      loadAgents()
      loadRuns(true)
      loadInbox()
      loadConnections()
      watchList()
      var fromHash = /run=([\w]+)/.exec(location.hash)
      if (fromHash) openRun(fromHash[1])
    }).catch(function (e) {
      if (again) unreachable(e)
      else showError(e.message)
    })
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
    b.addEventListener('click', function () { list.status = b.dataset.status; loadRuns(true) })
  })
  $('agent-filter').addEventListener('change', function () { list.agent = $('agent-filter').value; loadRuns(true) })
  $('more').addEventListener('click', function () { loadRuns(false) })
  $('start').addEventListener('submit', startFromForm)
  $('start-agent').addEventListener('change', describeAgent)
  document.addEventListener('visibilitychange', function () {
    if (!token || !access.may('runs:read')) return
    if (document.hidden) return drawRuns()
    reloadRuns()
    loadInbox()
    refreshRun()
  })

  function openRun(id) {
    selected = id
    drawn = null
    location.hash = 'run=' + id
    $('app').classList.add('run-open')
    // On a narrow screen the run comes first: start at its top, where its approvals are.
    window.scrollTo(0, 0)
    Array.prototype.forEach.call(document.querySelectorAll('#runs li'), function (li) {
      li.classList.toggle('selected', li.dataset.run === id)
    })
    if (stream) stream.abort()
    stream = new AbortController()
    follow(id, 0, stream.signal, function (name, data) { onRunEvent(id, name, data) })
    // Opened by a click (or the address): a read that fails says so at once.
    return readRun(id, undefined, true)
  }

  function closeRun() {
    selected = null
    shown = null
    drawn = null
    if (stream) stream.abort()
    history.replaceState(null, '', location.pathname + location.search)
    $('app').classList.remove('run-open')
    $('run-panel').replaceChildren(el('p', { class: 'hint', text: 'Choose a run.' }))
    drawRuns()
  }

  function runDeleted(id) {
    if (selected === id) closeRun()
    dropRun(id)
    $('run-panel').replaceChildren(el('p', { class: 'hint', 'data-testid': 'deleted', text: 'Run ' + id + ' was deleted.' }))
  }

  function refreshRun() { return selected ? readRun(selected) : Promise.resolve() }

  // A run read from itself: the open one is drawn, every one corrects its row and approvals.
  // loud: a person asked for it, so a failure is shown at once (else see unreachable).
  function readRun(id, at, loud) {
    return json('/v1/runs/' + id).then(function (view) {
      if (id === selected) {
        shown = view
        var text = JSON.stringify(view)
        if (text !== drawn) renderRun(view)
        drawn = text
      }
      noteView(view, at)
    }).catch(function (e) {
      // A run that is gone (deleted here or elsewhere) leaves the list, with one line saying so.
      if (e.status === 404) {
        if (id === selected) {
          closeRun()
          $('run-panel').replaceChildren(el('p', { class: 'hint', 'data-testid': 'gone', text: e.message }))
        }
        return dropRun(id)
      }
      if (loud) showError(e.message)
      else unreachable(e)
    })
  }

  // An event of a run the console follows: the events of one moment are one read of the run.
  function onRunEvent(id, name, data) {
    if (name === 'answer_delta' || name === 'thought_delta') return onDelta(id, name, data)
    if (name === 'stream_opened') return dropLive(id)
    if (id === selected) document.body.dataset.lastEvent = name
    var entry = due[id] || (due[id] = { at: null, timer: null })
    if (data && data.at) entry.at = data.at
    clearTimeout(entry.timer)
    entry.timer = setTimeout(function () {
      delete due[id]
      readRun(id, entry.at)
    }, 100)
  }
` +
  CONSOLE_EVENT_STREAM +
  CONSOLE_RUN_LIST +
  CONSOLE_LIST_STREAM +
  CONSOLE_TIMELINE +
  CONSOLE_FAMILY +
  CONSOLE_STEP_CHART +
  CONSOLE_CONTROLS +
  CONSOLE_INBOX_ACTIONS +
  CONSOLE_START_FORM +
  CONSOLE_CONNECTIONS +
  String.raw`
  start()
  setInterval(function () {
    if (!token || document.hidden) return
    // A /v1/me that failed (not a refused token: that signs out) is asked again.
    if (!access.known()) return enter(true)
    if (access.may('runs:read') && !listStream.live) { reloadRuns(); loadInbox() }
  }, POLL_MS)
})()
`
