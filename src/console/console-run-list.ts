/**
 * The run list and the approval inbox. Both come from the run index, which may lag a run by a
 * moment; a run the console follows (the open one, the unfinished ones listed, those started
 * here) is shown from its own view instead, read again after each of its events, so its row and
 * its approvals change within a moment of the run. Runs started elsewhere come from the run-list
 * stream (console-list-stream.ts), or from a short poll of the index while it is down.
 *
 * A piece of the console script's one closure (console-script.ts joins it in): function
 * declarations only, using that closure's `el`, `$`, `json`, `showError`, `unreachable`, `openRun`,
 * `follow`, `onRunEvent`, `selected` and `agents`.
 */
export const CONSOLE_RUN_LIST = String.raw`
  // A browser opens at most six connections to one HTTP/1.1 origin (wrangler dev is one), for
  // all its tabs: there the open run's stream and the page's own requests need theirs, so only
  // two rows are followed. HTTP/2 (Cloudflare's edge) carries them all on one connection.
  var served = (performance.getEntriesByType('navigation')[0] || {}).nextHopProtocol || ''
  var MAX_FOLLOWED = /^h[23]/.test(served) ? 8 : 2
  var list = {
    status: '',
    agent: '',
    cursor: null,
    // The index's last answers, and the rows of runs the console reads itself, by run id.
    runs: [],
    approvals: [],
    viewed: {},
    // Runs started from this tab: listed before the index has them.
    startedHere: {},
    followed: {},
    // Runs found gone (deleted): the index may list them a moment longer.
    gone: {},
  }

  function active(status) { return status === 'running' || status === 'awaiting_approval' }

  function listQuery(limit, cursor) {
    return '?limit=' + limit + (list.status ? '&status=' + list.status : '') +
      (list.agent ? '&agent=' + encodeURIComponent(list.agent) : '') +
      (cursor ? '&cursor=' + encodeURIComponent(cursor) : '')
  }

  // reset: a new filter (the first page); else the next page ("More").
  function loadRuns(reset) {
    if (reset) { list.cursor = null; list.runs = [] }
    Array.prototype.forEach.call(document.querySelectorAll('#filters button'), function (b) {
      b.classList.toggle('active', b.dataset.status === list.status)
    })
    var asked = { status: list.status, agent: list.agent }
    return json('/v1/runs' + listQuery(25, list.cursor)).then(function (page) {
      if (asked.status !== list.status || asked.agent !== list.agent) return
      list.runs = list.runs.concat(page.items)
      list.cursor = page.nextCursor
      drawRuns()
    }).catch(function (e) { showError(e.message) })
  }

  // The poll: every row shown is asked again in one request (up to the API's page limit).
  function reloadRuns() {
    var asked = { status: list.status, agent: list.agent }
    var limit = Math.min(100, Math.max(25, list.runs.length))
    return json('/v1/runs' + listQuery(limit, null)).then(function (page) {
      if (asked.status !== list.status || asked.agent !== list.agent) return
      list.runs = page.items
      list.cursor = page.nextCursor
      drawRuns()
    }).catch(unreachable)
  }

  function loadInbox() {
    return json('/v1/approvals?limit=100').then(function (page) {
      list.approvals = page.items
      drawInbox()
    }).catch(unreachable)
  }

  // What the list shows of a run, from its own view: fresher than the index for as long as the
  // console follows it.
  function noteView(view, at) {
    var before = list.viewed[view.id]
    var row = {
      id: view.id,
      task: view.task,
      status: view.status,
      createdAt: view.createdAt,
      updatedAt: at || (before && before.updatedAt) || new Date().toISOString(),
      stepCount: view.stepCount,
      requestedBy: view.requestedBy,
      pending: view.pendingApprovals.map(function (a) { return Object.assign({ runId: view.id }, a) }),
    }
    if (view.agent) row.agent = view.agent
    list.viewed[view.id] = row
    drawRuns()
    drawInbox()
  }

  function forgetView(id) {
    var row = list.viewed[id]
    if (row && !active(row.status)) return
    delete list.viewed[id]
  }

  function matches(run) {
    return (!list.status || run.status === list.status) &&
      (!list.agent || (run.agent && run.agent.name === list.agent))
  }

  function drawRuns() {
    var indexed = {}
    var rows = []
    list.runs.forEach(function (item) {
      if (list.gone[item.id]) return
      indexed[item.id] = true
      delete list.startedHere[item.id]
      var run = list.viewed[item.id] ? Object.assign({}, item, list.viewed[item.id]) : item
      if (matches(run)) rows.push(run)
    })
    var fresh = Object.keys(list.startedHere).filter(function (id) {
      return !indexed[id] && list.viewed[id] && matches(list.viewed[id])
    }).map(function (id) { return list.viewed[id] })
    rows = fresh.reverse().concat(rows)

    var box = $('runs')
    var old = {}
    Array.prototype.forEach.call(box.children, function (li) { if (li.dataset.run) old[li.dataset.run] = li })
    var items = rows.map(function (run) { return runRow(old[run.id], run) })
    var same = items.length === box.children.length && items.every(function (li, i) { return box.children[i] === li })
    if (!same) box.replaceChildren.apply(box, items)
    if (!items.length) box.append(el('li', { class: 'hint', text: 'No runs.' }))
    $('more').hidden = !list.cursor
    followListed(rows)
  }

  // One row, drawn again only when what it shows changed (a click on it is not lost).
  function runRow(li, run) {
    li = li || el('li', { 'data-run': run.id, onclick: function () { openRun(run.id) } })
    li.classList.toggle('selected', run.id === selected)
    var meta = run.stepCount + ' steps · ' + new Date(run.updatedAt).toLocaleString() + ' · ' + run.requestedBy
    var key = JSON.stringify([run.status, run.task, meta, run.agent || null])
    if (li.dataset.key === key) return li
    li.dataset.key = key
    li.dataset.status = run.status
    li.replaceChildren(
      el('span', { class: 'status ' + run.status, text: run.status.replace('_', ' ') }),
      el('span', { class: 'task', text: run.task }),
      el('div', { class: 'meta' },
        run.agent ? el('span', { class: 'agent', 'data-testid': 'run-agent', text: run.agent.name + ' · ' }) : null,
        el('span', { text: meta })))
    return li
  }

  // The unfinished rows listed first are followed through their event streams, while the tab
  // is in view (a hidden tab keeps only the open run's stream).
  function followListed(rows) {
    var want = {}
    rows.filter(function (run) { return active(run.status) && run.id !== selected && !document.hidden })
      .slice(0, MAX_FOLLOWED)
      .forEach(function (run) { want[run.id] = true })
    Object.keys(list.followed).forEach(function (id) {
      if (want[id]) return
      list.followed[id].abort()
      delete list.followed[id]
    })
    Object.keys(want).forEach(function (id) {
      if (list.followed[id]) return
      var controller = new AbortController()
      list.followed[id] = controller
      follow(id, 0, controller.signal, function (name, data) { onRunEvent(id, name, data) })
    })
    // A run no stream follows any more is shown from the index again (its view would go stale).
    Object.keys(list.viewed).forEach(function (id) {
      if (id !== selected && !list.followed[id] && !list.startedHere[id]) forgetView(id)
    })
  }

  function stopFollowing() {
    Object.keys(list.followed).forEach(function (id) { list.followed[id].abort() })
    list.followed = {}
  }

  // The inbox: the index's approvals, except for runs read from their own view.
  function drawInbox() {
    var now = new Date().toISOString()
    var items = list.approvals.filter(function (a) {
      return !list.viewed[a.runId] && !list.gone[a.runId] && a.expiresAt > now
    })
    Object.keys(list.viewed).forEach(function (id) { items = items.concat(list.viewed[id].pending) })
    items.sort(function (a, b) { return a.requestedAt < b.requestedAt ? 1 : -1 })
    var box = $('inbox')
    var old = {}
    Array.prototype.forEach.call(box.children, function (li) { if (li.dataset.call) old[li.dataset.run + ' ' + li.dataset.call] = li })
    var rows = items.map(function (a) { return old[a.runId + ' ' + a.callId] || inboxRow(a) })
    var same = rows.length === box.children.length && rows.every(function (li, i) { return box.children[i] === li })
    if (!same) box.replaceChildren.apply(box, rows)
    if (!rows.length) box.append(el('li', { class: 'hint', text: 'None waiting.' }))
    $('inbox-count').textContent = rows.length ? ' (' + rows.length + ')' : ''
  }

  function inboxRow(a) {
    var run = list.viewed[a.runId] || list.runs.filter(function (r) { return r.id === a.runId })[0]
    var kind = a.kind && a.kind !== 'approval' ? a.kind : null
    return el('li', { 'data-run': a.runId, 'data-call': a.callId, 'data-kind': a.kind || 'approval', onclick: function () { openRun(a.runId) } },
      el('strong', { text: (kind ? kind + ': ' : '') + a.tool }),
      run ? el('div', { class: 'meta', text: 'for: ' + run.task }) : null,
      el('pre', { class: 'args', text: JSON.stringify(a.args, null, 2) }),
      a.reason ? el('div', { class: 'reason', text: a.reason }) : null,
      el('div', { class: 'meta', text: a.runId + ' · ' + a.requestedBy + ' · expires ' + new Date(a.expiresAt).toLocaleString() }),
      inboxActions(a))
  }

  // A run that is gone (deleted): out of the list, the inbox and the streams.
  function dropRun(id) {
    list.gone[id] = true
    list.runs = list.runs.filter(function (r) { return r.id !== id })
    list.approvals = list.approvals.filter(function (a) { return a.runId !== id })
    delete list.viewed[id]
    delete list.startedHere[id]
    if (list.followed[id]) { list.followed[id].abort(); delete list.followed[id] }
    drawRuns()
    drawInbox()
  }
`
