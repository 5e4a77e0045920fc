/**
 * A run's event stream as the console reads it: `fetch` (an EventSource cannot send the
 * Authorization header), frames parsed by their fields, resumed after the last numbered event
 * until run_finished (`readFrames` also reads the run-list stream). Events without an id (the answer or thought being written) are passed on
 * but never become the resume point: a reconnect does not replay them.
 *
 * A piece of the console script's one closure (console-script.ts joins it in): function
 * declarations only, using that closure's `api` and `unreachable`.
 */
export const CONSOLE_EVENT_STREAM = String.raw`
  // Calls onEvent(name, data, seq) for each frame; seq is null for an event without an id.
  function follow(id, after, signal, onEvent) {
    var headers = after ? { 'Last-Event-ID': String(after) } : {}
    api('/v1/runs/' + id + '/events', { headers: headers, signal: signal }).then(function (res) {
      var finished = false
      // Live text is never replayed: what was written while no connection was open is missing.
      onEvent('stream_opened', {}, null)
      return readFrames(res, signal, function (frame) {
        if (frame.seq !== null) after = frame.seq
        if (frame.name === 'run_finished') finished = true
        onEvent(frame.name, frame.data, frame.seq)
      }).then(function () {
        if (!finished && !signal.aborted) setTimeout(function () { follow(id, after, signal, onEvent) }, 1000)
      })
    }).catch(function (e) {
      if (signal.aborted) return
      // No such run (any more): nothing to follow; the run's own read says so.
      if (e.status === 404) return onEvent('gone', {}, null)
      // A dropped connection or a restart is retried quietly; a long outage is shown.
      unreachable(e)
      setTimeout(function () { follow(id, after, signal, onEvent) }, 3000)
    })
  }

  // Reads a text/event-stream answer, calling onFrame for each frame; settles when it ends.
  function readFrames(res, signal, onFrame) {
    var reader = res.body.getReader()
    var decoder = new TextDecoder()
    var buffer = ''
    function pump() {
      return reader.read().then(function (chunk) {
        if (chunk.done) return
        buffer += decoder.decode(chunk.value, { stream: true }).replace(/\r\n?/g, '\n')
        var end
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          var frame = readFrame(buffer.slice(0, end))
          buffer = buffer.slice(end + 2)
          if (frame && !signal.aborted) onFrame(frame)
        }
        return pump()
      })
    }
    return pump()
  }

  // One frame's fields (comment lines, starting with a colon, are keep-alives): null when it
  // carries no data or data that is not JSON.
  function readFrame(text) {
    var name = 'message'
    var seq = null
    var id = null
    var data = []
    text.split('\n').forEach(function (line) {
      if (!line || line.charAt(0) === ':') return
      var colon = line.indexOf(':')
      var field = colon < 0 ? line : line.slice(0, colon)
      var value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
      if (field === 'event') name = value
      else if (field === 'data') data.push(value)
      else if (field === 'id') {
        id = value
        if (/^\d+$/.test(value)) seq = Number(value)
      }
    })
    if (!data.length) return null
    try {
      var parsed = JSON.parse(data.join('\n'))
    } catch (e) {
      return null
    }
    // Numbered events also carry their type and number in the data.
    if (name === 'message' && parsed.type) name = parsed.type
    if (seq === null && typeof parsed.seq === 'number') seq = parsed.seq
    return { name: name, data: parsed, seq: seq, id: id }
  }
`
