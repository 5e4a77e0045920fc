/**
 * The console's MCP connections (docs/mcp.md#oauth): the servers that use OAuth, who granted
 * each connection and when, a Connect button (a single-use link from
 * `POST /v1/connections/:server/link`, opened in a new tab: the authorization server's consent
 * page, then back to the callback) and a Disconnect button (`DELETE`). Tokens never reach the
 * page: the API lists none.
 *
 * A piece of the console script's one closure (console-script.ts joins it in): function
 * declarations only, using that closure's `el`, `$`, `api`, `json`, `showError` and `access`.
 */
export const CONSOLE_CONNECTIONS = String.raw`
  function loadConnections() {
    return json('/v1/connections').then(function (body) {
      var servers = body.servers || []
      $('connections-box').hidden = !servers.length
      document.body.dataset.connections = String((body.connections || []).length)
      $('connections').replaceChildren.apply($('connections'), servers.map(function (s) {
        return connectionRow(s, (body.connections || []).filter(function (c) { return c.server === s.name }))
      }))
    }).catch(function () { $('connections-box').hidden = true })
  }

  function connectionRow(server, granted) {
    var who = server.owner === 'person' ? 'each person connects their own' : 'one for the deployment'
    var li = el('li', { 'data-server': server.name })
    li.append(el('strong', { text: server.name }), el('span', { class: 'meta', text: ' ' + who }))
    granted.forEach(function (c) {
      var when = new Date(c.grantedAt).toLocaleString()
      var row = el('div', { class: 'connection', text: c.owner + ', granted by ' + c.grantor + ' on ' + when + (c.scopes ? ' (' + c.scopes + ')' : '') })
      var drop = el('button', { text: 'Disconnect' })
      drop.addEventListener('click', function () {
        api('/v1/connections/' + server.name + '?owner=' + encodeURIComponent(c.owner), { method: 'DELETE' })
          .then(loadConnections).catch(function (e) { showError(e.message) })
      })
      row.append(' ', drop)
      li.append(row)
    })
    if (server.auth === 'oauth') {
      var connect = el('button', { text: granted.length ? 'Connect again' : 'Connect' })
      connect.addEventListener('click', function () {
        // Opened at once (a popup blocker allows a tab opened in the click), sent on when the link comes.
        var tab = window.open('', '_blank')
        json('/v1/connections/' + server.name + '/link', { method: 'POST' }).then(function (link) {
          if (tab) tab.location.href = link.url
          else location.assign(link.url)
        }).catch(function (e) { if (tab) tab.close(); showError(e.message) })
      })
      li.append(' ', connect)
    }
    return li
  }
`
