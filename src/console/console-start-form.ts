/**
 * Starting a run from the console (a task, and an agent where the service has agents), and the
 * agents themselves: asked once from `GET /v1/agents`; a service without that route (or a token
 * it refuses) gets no agent picker and no agent filter, never an error.
 *
 * A piece of the console script's one closure (console-script.ts joins it in): function
 * declarations only, using that closure's `el`, `$`, `api`, `json`, `showError`, `access`,
 * `list`, `loadRuns` and `openRun`.
 */
export const CONSOLE_START_FORM = String.raw`
  // The service's agents: null until asked, [] where it has none (or no such route).
  var agents = null

  function loadAgents() {
    return fetch('/v1/agents', { headers: { Authorization: 'Bearer ' + token } }).then(function (res) {
      if (!res.ok) return []
      return res.json().then(function (body) { return Array.isArray(body.agents) ? body.agents : [] })
    }).catch(function () { return [] }).then(function (found) {
      agents = found
      showAgents()
    })
  }

  function showAgents() {
    var some = !!(agents && agents.length)
    // Known now (tests and people alike can tell "none" from "not asked yet").
    document.body.dataset.agents = String(agents ? agents.length : 0)
    $('agent-filter').hidden = !some
    $('start-agent-field').hidden = !some
    if (!some) return
    $('agent-filter').replaceChildren.apply($('agent-filter'), [el('option', { value: '', text: 'all agents' })].concat(
      agents.map(function (a) { return el('option', { value: a.name, text: a.name }) })))
    $('agent-filter').value = list.agent
    $('start-agent').replaceChildren.apply($('start-agent'), [el('option', { value: '', text: 'default (no agent)' })].concat(
      agents.map(function (a) { return el('option', { value: a.name, text: a.name }) })))
    describeAgent()
  }

  // What the chosen agent is for and brings: its description (here, not in the picker, whose
  // options a select cannot wrap), tools, model and protocol.
  function describeAgent() {
    var name = $('start-agent').value
    var agent = (agents || []).filter(function (a) { return a.name === name })[0]
    $('start-agent-about').textContent = agent
      ? [agent.description || '', agent.model ? 'model ' + agent.model : '', agent.protocol ? agent.protocol + ' protocol' : '',
        agent.tools && agent.tools.length ? 'tools ' + agent.tools.join(', ') : '',
        agent.outputSchema ? 'structured answer' : ''].filter(Boolean).join(' · ')
      : ''
  }

  // The form is offered to a token that may both start runs and read them (it opens the run).
  function showStartForm() {
    $('start-box').hidden = !(access.may('runs:write') && access.may('runs:read'))
  }

  function startFromForm(e) {
    e.preventDefault()
    var task = $('start-task').value.trim()
    if (!task) return showError('a run needs a task')
    var body = { task: task }
    if ($('start-agent').value && !$('start-agent-field').hidden) body.agent = $('start-agent').value
    var button = $('start').querySelector('button[type=submit]')
    button.disabled = true
    json('/v1/runs', { method: 'POST', body: JSON.stringify(body) }).then(function (started) {
      $('start-task').value = ''
      list.startedHere[started.id] = true
      return openRun(started.id)
    }).catch(function (err) { showError(err.message) }).then(function () { button.disabled = false })
  }
`
