/**
 * `GET /console` (docs/architecture.md#events): one static page, not compiled, written out as a static
 * asset by scripts/build.mjs (docs/development.md#the-build). The script (console-script.ts) asks
 * for an API token once and keeps it in sessionStorage; the page itself holds no secret.
 */
export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>edgeloop console</title>
<link rel="icon" href="/console/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/console.css">
<script src="/console/console.js" defer></script>
</head>
<body>
<header><h1><img src="/console/favicon.svg" alt="" width="20" height="20">edgeloop</h1><span id="who"></span><button id="sign-out" hidden>Forget token</button></header>
<form id="login" hidden>
  <label for="token">API token</label>
  <input id="token" type="password" autocomplete="off" required placeholder="API_TOKEN">
  <button type="submit">Open console</button>
  <p class="hint">Kept in this tab only (sessionStorage); sent as Authorization: Bearer.</p>
</form>
<main id="app" hidden>
  <section id="runs-panel">
    <h2 id="inbox-title">Waiting for a person<span id="inbox-count"></span></h2>
    <ol id="inbox"></ol>
    <details id="start-box" hidden>
      <summary>Start a run</summary>
      <form id="start">
        <label for="start-task">Task</label>
        <textarea id="start-task" rows="3" required></textarea>
        <span id="start-agent-field" hidden>
          <label for="start-agent">Agent</label>
          <select id="start-agent"></select>
          <span id="start-agent-about" class="meta"></span>
        </span>
        <button type="submit">Start</button>
      </form>
    </details>
    <details id="connections-box" hidden>
      <summary>Connections</summary>
      <ol id="connections"></ol>
    </details>
    <h2>Runs</h2>
    <nav id="filters">
      <button data-status="">all</button><button data-status="running">running</button><button data-status="awaiting_approval">awaiting approval</button><button data-status="succeeded">succeeded</button><button data-status="failed">failed</button>
    </nav>
    <select id="agent-filter" aria-label="Agent" hidden></select>
    <ol id="runs"></ol>
    <button id="more" hidden>More</button>
  </section>
  <section id="run-panel"><p class="hint">Choose a run.</p></section>
</main>
<p id="error" role="alert" hidden></p>
</body>
</html>
`
