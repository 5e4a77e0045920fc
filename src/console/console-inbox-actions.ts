/**
 * What the inbox lets a person do without opening the run (docs/human-in-the-loop.md#the-inbox):
 * Approve / Deny / Edit an approval (the edit form built from the tool's JSON Schema, its
 * `editSchema`), Answer / Decline a question (a button per choice, or a field), Connect (a
 * single-use link from the item's `href`, the server's link route, or the item's own URL). Each posts to the item's `href` with the hash shown; a refusal is shown under the
 * item, which stays.
 *
 * A piece of the console script's one closure (console-script.ts joins it in): function
 * declarations only, using that closure's `el`, `json`, `access`, `loadInbox` and `refreshRun`.
 */
export const CONSOLE_INBOX_ACTIONS = String.raw`
  function inboxActions(a) {
    if (!access.may('approvals:write')) return access.missing('Deciding', 'approvals:write')
    var box = el('div', { class: 'inbox-actions', 'data-testid': 'inbox-actions', onclick: function (e) { e.stopPropagation() } })
    var note = el('p', { class: 'needs', 'data-testid': 'inbox-error', hidden: '' })
    function post(body) {
      box.querySelectorAll('button').forEach(function (b) { b.disabled = true })
      note.hidden = true
      return json(a.href, { method: 'POST', body: JSON.stringify(body) }).then(function () {
        box.replaceChildren(el('span', { class: 'meta', 'data-testid': 'inbox-done', text: 'Sent.' }))
        loadInbox()
        refreshRun()
      }).catch(function (e) {
        box.querySelectorAll('button').forEach(function (b) { b.disabled = false })
        note.textContent = e.message
        note.hidden = false
      })
    }
    function button(text, cls, onclick) {
      return el('button', { class: cls, 'data-testid': 'inbox-' + text.toLowerCase(), text: text, onclick: onclick })
    }
    if (a.kind === 'question') {
      var ask = a.ask || {}
      box.append(el('div', { class: 'question', text: ask.message || '' }))
      if (ask.choices && ask.choices.length) {
        ask.choices.forEach(function (c) {
          box.append(el('button', { class: 'approve choice', 'data-testid': 'inbox-choice', text: c,
            onclick: function () { post({ question_hash: a.argsHash, answer: c }) } }), el('span', { text: ' ' }))
        })
      } else {
        var field = el(ask.schema ? 'textarea' : 'input', { 'data-testid': 'inbox-answer-field', 'aria-label': 'Answer',
          placeholder: ask.schema ? 'JSON matching: ' + JSON.stringify(ask.schema) : 'Your answer' })
        box.append(field, button('Answer', 'approve', function () {
          var value = field.value
          if (ask.schema) {
            try { value = JSON.parse(value) } catch (e) { note.textContent = 'the answer is not JSON: ' + e.message; note.hidden = false; return }
          }
          post({ question_hash: a.argsHash, answer: value })
        }))
      }
      box.append(el('span', { text: ' ' }), button('Decline', 'deny', function () { post({ question_hash: a.argsHash, decline: true }) }))
    } else if (a.kind === 'connect') {
      var url = a.ask && a.ask.details && a.ask.details.url
      box.append(el('div', { class: 'question', text: (a.ask && a.ask.message) || 'Connect an account' }))
      if (a.href) box.append(button('Connect', 'approve', function () { connectLink(a, box, note) }))
      else if (url) box.append(el('a', { class: 'connect', 'data-testid': 'inbox-connect', href: String(url), target: '_blank', rel: 'noopener', text: 'Connect' }))
    } else {
      box.append(
        button('Approve', 'approve', function () { post({ decision: 'approve', args_hash: a.argsHash }) }),
        el('span', { text: ' ' }),
        button('Deny', 'deny', function () { post({ decision: 'deny', args_hash: a.argsHash }) }))
      if (a.editSchema) {
        box.append(el('span', { text: ' ' }), button('Edit', '', function () {
          box.replaceChildren(editForm(a, post, note))
        }))
      }
    }
    return el('div', {}, box, note)
  }

  // An MCP server's connect item: its link route makes a single-use link for this person and
  // this item; the link is shown to follow (a window opened after a request would be blocked).
  function connectLink(a, box, note) {
    box.querySelectorAll('button').forEach(function (b) { b.disabled = true })
    note.hidden = true
    json(a.href, { method: 'POST', body: JSON.stringify({ runId: a.runId, itemId: a.callId }) }).then(function (link) {
      box.replaceChildren(el('a', { class: 'connect', 'data-testid': 'inbox-connect', href: String(link.url), target: '_blank', rel: 'noopener', text: 'Open the connect link' }))
    }).catch(function (e) {
      box.querySelectorAll('button').forEach(function (b) { b.disabled = false })
      note.textContent = e.message
      note.hidden = false
    })
  }

  // A form with one field per argument of the tool's schema, filled with the model's values.
  function editForm(a, post, note) {
    var props = (a.editSchema && a.editSchema.properties) || {}
    var form = el('form', { class: 'edit-form', 'data-testid': 'edit-form' })
    var fields = {}
    Object.keys(props).forEach(function (name) {
      var type = props[name] && props[name].type
      var value = a.args[name]
      var input
      if (type === 'string') input = el('input', { value: value === undefined ? '' : String(value) })
      else if (type === 'number' || type === 'integer') input = el('input', { type: 'number', step: 'any', value: value === undefined ? '' : String(value) })
      else if (type === 'boolean') { input = el('input', { type: 'checkbox' }); input.checked = !!value }
      else input = el('textarea', { rows: '3' }, document.createTextNode(value === undefined ? '' : JSON.stringify(value, null, 2)))
      input.setAttribute('name', name)
      input.setAttribute('data-testid', 'edit-' + name)
      fields[name] = { input: input, type: type }
      form.append(el('label', { text: name }), input)
    })
    form.append(el('button', { class: 'approve', type: 'submit', 'data-testid': 'edit-approve', text: 'Approve edited' }))
    form.addEventListener('submit', function (e) {
      e.preventDefault()
      var args = {}
      for (var name in fields) {
        var f = fields[name]
        var raw = f.input.value
        if (f.type === 'boolean') args[name] = f.input.checked
        else if (f.type === 'string') args[name] = raw
        else if (raw === '') continue
        else if (f.type === 'number' || f.type === 'integer') args[name] = Number(raw)
        else {
          try { args[name] = JSON.parse(raw) } catch (err) { note.textContent = name + ': not JSON (' + err.message + ')'; note.hidden = false; return }
        }
      }
      post({ decision: 'approve', args_hash: a.argsHash, args: args })
    })
    return form
  }
`
