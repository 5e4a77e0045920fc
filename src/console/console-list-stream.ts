/**
 * The run list kept current by `GET /v1/runs/stream` (docs/http-api.md#the-run-list-stream): a
 * run started anywhere (a curl, Slack, another tab) is listed, and every row and the inbox
 * change, within a moment of the run index. While the stream is down (refused, cut, not
 * served) the list is polled instead, and the stream is tried again; `body[data-list-stream]`
 * says which (`live` or `polling`).
 *
 * A piece of the console script's one closure (console-script.ts joins it in): function
 * declarations only, using that closure's `api`, `readFrames`, `list`, `drawRuns`, `drawInbox`,
 * `dropRun`, `reloadRuns` and `loadInbox`.
 */
export const CONSOLE_LIST_STREAM = String.raw`
  var listStream = { controller: null, live: false, lastId: null, retry: null }

  function listLive(live) {
    listStream.live = live
    document.body.dataset.listStream = live ? 'live' : 'polling'
  }

  function watchList() {
    stopWatchingList()
    var controller = new AbortController()
    listStream.controller = controller
    var headers = listStream.lastId ? { 'Last-Event-ID': listStream.lastId } : {}
    api('/v1/runs/stream', { headers: headers, signal: controller.signal }).then(function (res) {
      return readFrames(res, controller.signal, onListFrame)
    }).then(function () {
      // The server ended it (a slow reader, a restart): resume after the last change.
      rewatchList(controller, 1000)
    }, function (e) {
      rewatchList(controller, e && e.status === 429 ? 5000 : 3000)
    })
  }

  function rewatchList(controller, ms) {
    if (controller.signal.aborted) return
    listLive(false)
    listStream.retry = setTimeout(watchList, ms)
  }

  function stopWatchingList() {
    clearTimeout(listStream.retry)
    if (listStream.controller) listStream.controller.abort()
    listStream.controller = null
    listLive(false)
  }

  function onListFrame(frame) {
    if (frame.id) listStream.lastId = frame.id
    var change = frame.data
    if (change.type === 'ready') {
      listLive(true)
      // Changes were missed (or this is the first connection): the index says where things stand.
      if (change.relist) { reloadRuns(); loadInbox() }
    } else if (change.type === 'run') {
      onListedRun(change.run, change.approvals)
    } else if (change.type === 'run_deleted') {
      dropRun(change.id)
    }
  }

  // A run's row as the index now has it: replaced in place, or listed where it sorts (newest
  // first); one older than every row of a list with more pages belongs to a later page.
  function onListedRun(run, approvals) {
    if (list.gone[run.id]) return
    var at = list.runs.findIndex(function (r) { return r.id === run.id })
    if (at >= 0) list.runs[at] = run
    else {
      var before = list.runs.findIndex(function (r) {
        return r.createdAt < run.createdAt || (r.createdAt === run.createdAt && r.id < run.id)
      })
      if (before >= 0) list.runs.splice(before, 0, run)
      else if (!list.cursor) list.runs.push(run)
    }
    list.approvals = list.approvals.filter(function (a) { return a.runId !== run.id }).concat(approvals)
    drawRuns()
    drawInbox()
  }
`
