/**
 * The open run's panel: what waits for a person first, then the per-step chart, the steps with
 * their calls and observations (long ones folded to a few lines, "show all"; truncated ones read
 * whole with "read more"), the answer being written while the model streams it, and the end.
 *
 * A piece of the console script's one closure (console-script.ts joins it in): function
 * declarations only, using that closure's `el`, `$`, `json`, `showError`, `selected`, `closeRun`,
 * the controls (console-controls.ts), `stepChart` (console-step-chart.ts) and the family
 * (console-family.ts).
 */
export const CONSOLE_TIMELINE = String.raw`
  // Whole observations already read ("read more") and observations unfolded ("show all"), by
  // run and call: a redraw of the timeline (when the run changed) keeps them as they were.
  var whole = {}
  var unfolded = {}
  // The reply being streamed for the open run: { runId, step, thought, answer }.
  var live = null
  // Lines of an observation shown folded.
  var FOLDED_LINES = 6

  function money(usd) { return usd === undefined ? '' : ' · $' + usd.toFixed(4) }

  function renderRun(view) {
    var r = view.result
    var panel = $('run-panel')
    var usage = r.usage
    var waiting = view.pendingApprovals
    var below = view.descendantApprovals || []
    var count = waiting.length + below.length
    panel.replaceChildren.apply(panel, [
      el('button', { class: 'back', text: '← All runs', onclick: closeRun }),
      el('h2', {}, el('span', { class: 'status ' + view.status, 'data-testid': 'run-status', text: view.status.replace('_', ' ') }), el('span', { text: view.task })),
      el('div', { class: 'meta', 'data-testid': 'run-usage', text: view.id + ' · ' + usage.promptTokens + ' prompt + ' + usage.completionTokens + ' completion tokens · ' + usage.activeMs + ' ms active' + money(usage.costUsd) + (r.model ? ' · ' + r.model : '') }),
      view.agent ? el('div', { class: 'meta', 'data-testid': 'run-agent', text: 'agent ' + view.agent.name + ' · version ' + String(view.agent.version).slice(0, 12) }) : null,
      parentLine(view),
      runControls(view),
      count ? el('h3', { class: 'waiting', text: count + ' waiting for approval' }) : null,
    ].filter(Boolean))
    waiting.forEach(function (a) { panel.append(renderApproval(view, a)) })
    below.forEach(function (a) { panel.append(descendantApproval(a)) })
    var tree = familyTree(view)
    if (tree) panel.append(tree)
    var chart = stepChart(r.steps)
    if (chart) panel.append(chart)
    guardrailNotes(r, null).forEach(function (note) { panel.append(note) })
    r.steps.forEach(function (step) { panel.append(renderStep(view, step)) })
    var writing = liveBox(view)
    if (writing) panel.append(writing)
    if (view.status === 'succeeded') panel.append(el('div', { class: 'answer', 'data-testid': 'answer', text: r.answer }))
    if (view.status === 'failed') panel.append(el('div', { class: 'failure', 'data-testid': 'failure', text: r.stopReason + (r.error ? ': ' + r.error : '') }))
  }

  function runControls(view) {
    var box = el('div', { class: 'run-controls' })
    if (view.status === 'running' || view.status === 'awaiting_approval') box.append(cancelControl(view))
    var remove = deleteControl(view)
    if (remove) box.append(remove)
    return box.children.length ? box : null
  }

  function renderStep(view, step) {
    var box = el('div', { class: 'step', 'data-step': String(step.i) },
      el('div', { class: 'meta', text: 'Step ' + (step.i + 1) + ' · ' + step.kind + ' · ' + step.promptTokens + ' + ' + step.completionTokens + ' tokens' + (step.estimated ? ' (estimated)' : '') + ' · ' + step.ms + ' ms (model ' + step.modelMs + ' ms)' + money(step.costUsd) }),
      step.thought ? el('div', { class: 'thought', text: step.thought }) : null,
      step.formatError ? el('pre', { text: step.formatError }) : null)
    step.calls.forEach(function (call) { box.append(renderCall(view, step, call)) })
    guardrailNotes(view.result, step.i).forEach(function (note) { box.append(note) })
    return box
  }

  // The guardrails that tripped or rewrote at step i (null: on the task), one line each; a pass
  // is in the trace but not on the timeline (docs/guardrails.md).
  function guardrailNotes(r, i) {
    return (r.guardrails || []).filter(function (g) {
      return g.verdict !== 'pass' && (g.step === undefined ? null : g.step) === i
    }).map(function (g) {
      var what = g.verdict === 'tripwire' ? 'tripped' : 'rewrote'
      var where = g.point + (g.tool ? ' of ' + g.tool : '')
      return el('div', { class: 'guardrail ' + g.verdict, 'data-testid': 'guardrail',
        text: 'guardrail ' + g.guardrail + ' ' + what + ' ' + where + (g.reason ? ': ' + g.reason : '') })
    })
  }

  function renderCall(view, step, call) {
    var key = view.id + ' ' + call.id
    var full = call.handle ? whole[view.id + ' ' + call.handle] : undefined
    var text = full !== undefined ? full : call.observation || '(' + call.status + ')'
    var more = null
    if (call.truncated && call.handle && full === undefined) {
      more = el('button', { class: 'read-more', text: 'read more (' + call.originalSize + ' characters)', onclick: function () {
        json('/v1/runs/' + view.id + '/observations/' + encodeURIComponent(call.handle)).then(function (o) {
          whole[view.id + ' ' + call.handle] = o.text
          unfolded[key] = true
          // The timeline may have been redrawn while this loaded: open the call as it is shown
          // now, not the one this button belonged to.
          if (selected !== view.id) return
          var shownCall = document.querySelector('#run-panel .step[data-step="' + step.i +
            '"] .call[data-call="' + CSS.escape(call.id) + '"]')
          if (!shownCall) return
          shownCall.querySelector('.output').replaceWith(observationBox(key, o.text))
          var button = shownCall.querySelector('button.read-more')
          if (button) button.remove()
        }).catch(function (e) { showError(e.message) })
      } })
    }
    var waits = call.status === 'awaiting_approval'
    return el('div', { class: 'call', 'data-call': call.id },
      el('strong', { text: call.name }),
      el('span', { class: 'meta', text: ' ' + call.status + (call.kind ? ' · ' + call.kind : '') + ' · ' + call.ms + ' ms' + (call.approval && call.approval.decidedBy ? ' · ' + call.approval.decision + ' by ' + call.approval.decidedBy : '') }),
      waits ? el('button', { class: 'jump', text: 'waiting: decide above ↑', onclick: function () {
        var box = document.querySelector('#run-panel .approval[data-call="' + CSS.escape(call.id) + '"]')
        if (box) box.scrollIntoView({ block: 'center' })
      } }) : null,
      el('pre', { class: 'args', text: JSON.stringify(call.args, null, 2) }),
      observationBox(key, text), more)
  }

  // An observation, folded to its first lines when it is long; "show all" unfolds it.
  function observationBox(key, text) {
    var pre = el('pre', { class: 'observation', text: text })
    var lines = text.split('\n').length
    var long = lines > FOLDED_LINES || text.length > FOLDED_LINES * 120
    var box = el('div', { class: 'output' }, pre)
    if (!long) return box
    var toggle = el('button', { class: 'show-all', onclick: function () {
      unfolded[key] = !unfolded[key]
      fold()
    } })
    function fold() {
      pre.classList.toggle('folded', !unfolded[key])
      toggle.textContent = unfolded[key] ? 'show less' : 'show all (' + lines + ' lines)'
    }
    fold()
    box.append(toggle)
    return box
  }

  function renderApproval(view, a) {
    return el('div', { class: 'approval', 'data-testid': 'approval', 'data-call': a.callId },
      el('strong', { text: 'Approve ' + a.tool + '?' }),
      el('pre', { class: 'args', text: JSON.stringify(a.args, null, 2) }),
      el('div', { class: 'thought', text: a.reason }),
      el('div', { class: 'meta' }, el('span', { text: 'arguments hash ' }), el('code', { 'data-testid': 'args-hash', text: a.argsHash }), el('span', { text: ' · expires ' + new Date(a.expiresAt).toLocaleString() })),
      decisionControls(view, a))
  }

  // A streamed piece of the open run's next reply (thought or answer).
  function onDelta(runId, name, data) {
    if (runId !== selected || typeof data.delta !== 'string' || typeof data.step !== 'number') return
    if (!live || live.runId !== runId || live.step !== data.step) live = { runId: runId, step: data.step, thought: '', answer: '' }
    if (name === 'answer_delta') live.answer += data.delta
    else live.thought += data.delta
    var box = document.querySelector('#run-panel [data-testid=live]')
    var fresh = liveBox(shown && shown.id === runId ? shown : null)
    if (!fresh) return
    if (box) box.replaceWith(fresh)
    else {
      var end = document.querySelector('#run-panel .answer, #run-panel .failure')
      if (end) end.before(fresh)
      else $('run-panel').append(fresh)
    }
  }

  // The reply being written, until the step it belongs to is recorded.
  function liveBox(view) {
    if (!live || !view || live.runId !== view.id || live.step < view.result.steps.length) return null
    if (view.status !== 'running') return null
    return el('div', { class: 'step live', 'data-testid': 'live', 'data-step': String(live.step) },
      el('div', { class: 'meta', text: 'Step ' + (live.step + 1) + ' · being written…' }),
      live.thought ? el('div', { class: 'thought', 'data-testid': 'live-thought', text: live.thought }) : null,
      live.answer ? el('div', { class: 'answer writing', 'data-testid': 'live-answer', text: live.answer }) : null)
  }
`
