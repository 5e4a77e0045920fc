/**
 * The run's steps as a small chart: per step, its time (upper bars) and its tokens (lower bars),
 * a mark above the steps whose calls had side effects. SVG built element by element (no markup
 * parsed, no inline style: the page's Content-Security-Policy allows neither); a click on a
 * step's column scrolls to that step in the timeline.
 *
 * A piece of the console script's one closure (console-script.ts joins it in): function
 * declarations only, using that closure's `el`.
 */
export const CONSOLE_STEP_CHART = String.raw`
  var SVG = 'http://www.w3.org/2000/svg'

  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag)
    for (var k in attrs) node.setAttribute(k, attrs[k])
    for (var i = 2; i < arguments.length; i++) if (arguments[i]) node.append(arguments[i])
    return node
  }

  // The calls of a step that asked for a person or were side effects by how they ended (a
  // side effect allowed by policy without asking leaves no mark in the trace).
  function sideEffects(step) {
    return step.calls.filter(function (c) {
      return c.approval || c.kind === 'dry_run' || c.kind === 'denied' || c.kind === 'outcome_unknown'
    })
  }

  function stepChart(steps) {
    if (!steps.length) return null
    var W = 10
    var maxMs = Math.max.apply(null, steps.map(function (s) { return s.ms }).concat([1]))
    var maxTokens = Math.max.apply(null, steps.map(function (s) { return s.promptTokens + s.completionTokens }).concat([1]))
    var chart = svg('svg', { viewBox: '0 0 ' + steps.length * W + ' 60', preserveAspectRatio: 'none', role: 'img', 'aria-label': 'Time and tokens per step' })
    steps.forEach(function (step, i) {
      var tokens = step.promptTokens + step.completionTokens
      var effects = sideEffects(step)
      var msH = Math.max(0.5, 24 * step.ms / maxMs)
      var tokH = Math.max(0.5, 24 * tokens / maxTokens)
      var label = 'Step ' + (i + 1) + ': ' + step.ms + ' ms, ' + tokens + ' tokens' +
        (effects.length ? ', side effect: ' + effects.map(function (c) {
          return c.name + (c.approval && c.approval.decision ? ' (' + c.approval.decision + ')' : c.kind ? ' (' + c.kind + ')' : '')
        }).join(', ') : '')
      var column = svg('g', { class: 'column', 'data-step': String(step.i) },
        svg('title', {}, document.createTextNode(label)),
        svg('rect', { class: 'hit', x: i * W, y: 0, width: W, height: 60 }),
        effects.length ? svg('rect', { class: 'effect', x: i * W + 2, y: 0, width: W - 4, height: 4 }) : null,
        svg('rect', { class: 'ms', x: i * W + 1.5, y: 30 - msH, width: W - 3, height: msH }),
        svg('rect', { class: 'tokens', x: i * W + 1.5, y: 31, width: W - 3, height: tokH }))
      column.dataset.ms = String(step.ms)
      column.dataset.tokens = String(tokens)
      if (effects.length) column.dataset.sideEffect = effects.map(function (c) { return c.name }).join(' ')
      column.addEventListener('click', function () {
        var box = document.querySelector('#run-panel .step[data-step="' + step.i + '"]')
        if (box) box.scrollIntoView({ block: 'start' })
      })
      chart.append(column)
    })
    var total = steps.reduce(function (sum, s) { return sum + s.ms }, 0)
    return el('figure', { class: 'step-chart', 'data-testid': 'step-chart' }, chart,
      el('figcaption', { class: 'meta' },
        el('span', { class: 'key ms' }), el('span', { text: 'time (longest ' + maxMs + ' ms, all ' + total + ' ms) ' }),
        el('span', { class: 'key tokens' }), el('span', { text: 'tokens (most ' + maxTokens + ') ' }),
        el('span', { class: 'key effect' }), el('span', { text: 'side effect' })))
  }
`
