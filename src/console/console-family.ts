/**
 * A run's family in its panel (docs/agents.md#delegation): the run that delegated it (opens it),
 * its child runs as a tree with their status, each opening in place (its steps, its answer, its
 * own children), and the approvals its descendants wait for, decided on their own runs.
 *
 * A piece of the console script's one closure (console-script.ts joins it in): function
 * declarations only, using that closure's `el`, `json`, `showError`, `openRun`, and the
 * timeline's `renderStep` and `renderApproval`.
 */
export const CONSOLE_FAMILY = String.raw`
  // Child runs opened in place, by run id: a redraw of the panel keeps them open.
  var openedChildren = {}

  function parentLine(view) {
    if (!view.parentRunId) return null
    return el('div', { class: 'meta', 'data-testid': 'parent-run' },
      el('span', { text: 'child run of ' }),
      el('button', { class: 'link', text: view.parentRunId, onclick: function () { openRun(view.parentRunId) } }))
  }

  function familyTree(view) {
    if (!view.children || !view.children.length) return null
    var list = el('ul', { class: 'tree' })
    view.children.forEach(function (c) { list.append(childItem(c)) })
    return el('div', { class: 'family', 'data-testid': 'children' },
      el('h3', { text: view.children.length + (view.children.length === 1 ? ' child run' : ' child runs') }), list)
  }

  function childItem(c) {
    var body = el('div', { class: 'child-run' })
    var toggle = el('button', { class: 'toggle', 'data-testid': 'child-toggle', onclick: function () {
      openedChildren[c.runId] = !openedChildren[c.runId]
      show()
    } })
    function show() {
      var open = !!openedChildren[c.runId]
      toggle.textContent = (open ? '▾ ' : '▸ ') + c.agent
      toggle.setAttribute('aria-expanded', String(open))
      if (!open) return body.replaceChildren()
      body.replaceChildren(el('p', { class: 'hint', text: 'Loading…' }))
      json('/v1/runs/' + c.runId).then(function (child) {
        if (openedChildren[c.runId]) body.replaceChildren(childPanel(child))
      }).catch(function (e) { showError(e.message) })
    }
    show()
    return el('li', { 'data-run': c.runId },
      toggle, el('span', { text: ' ' }),
      el('span', { class: 'status ' + c.status, text: c.status.replace('_', ' ') }),
      el('code', { text: c.runId }), body)
  }

  // A child run drawn inside its parent's panel: its steps, its end, its own children.
  function childPanel(child) {
    var r = child.result
    var box = el('div', { 'data-testid': 'child-panel', 'data-run': child.id },
      el('div', { class: 'meta', text: child.task }),
      el('div', { class: 'meta', text: r.usage.promptTokens + ' prompt + ' + r.usage.completionTokens + ' completion tokens · ' + r.usage.activeMs + ' ms active' }),
      el('button', { class: 'link', text: 'open run ' + child.id, onclick: function () { openRun(child.id) } }))
    r.steps.forEach(function (step) { box.append(renderStep(child, step)) })
    if (child.status === 'succeeded') box.append(el('div', { class: 'answer', text: r.answer }))
    if (child.status === 'failed') box.append(el('div', { class: 'failure', text: r.stopReason + (r.error ? ': ' + r.error : '') }))
    var tree = familyTree(child)
    if (tree) box.append(tree)
    return box
  }

  // An approval a descendant waits for: decided on that run, named with its run and agent.
  function descendantApproval(a) {
    var box = renderApproval({ id: a.runId }, a)
    box.prepend(el('div', { class: 'meta', 'data-testid': 'descendant', text: 'in child run ' + a.runId + ' (agent ' + a.agent + ')' }))
    return box
  }
`
