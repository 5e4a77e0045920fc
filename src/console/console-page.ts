/**
 * `GET /console` (docs/architecture.md#events): one static page, no build step. The script (console-script.ts) asks
 * for an API token once and keeps it in sessionStorage; the page itself holds no secret.
 */
export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>edgeloop console</title>
<link rel="stylesheet" href="/console/console.css">
<script src="/console/console.js" defer></script>
</head>
<body>
<header><h1>edgeloop</h1><span id="who"></span><button id="sign-out" hidden>Forget token</button></header>
<form id="login" hidden>
  <label for="token">API token</label>
  <input id="token" type="password" autocomplete="off" required placeholder="API_TOKEN">
  <button type="submit">Open console</button>
  <p class="hint">Kept in this tab only (sessionStorage); sent as Authorization: Bearer.</p>
</form>
<main id="app" hidden>
  <section id="runs-panel">
    <h2>Runs</h2>
    <nav id="filters">
      <button data-status="">all</button><button data-status="running">running</button><button data-status="awaiting_approval">awaiting approval</button><button data-status="succeeded">succeeded</button><button data-status="failed">failed</button>
    </nav>
    <ol id="runs"></ol>
    <button id="more" hidden>More</button>
    <h2>Pending approvals</h2>
    <ol id="inbox"></ol>
  </section>
  <section id="run-panel"><p class="hint">Choose a run.</p></section>
</main>
<p id="error" role="alert" hidden></p>
</body>
</html>
`

export const CONSOLE_CSS = `
:root { font: 14px/1.45 system-ui, sans-serif; color: #1d2330; background: #f5f6f8; }
body { margin: 0; }
[hidden] { display: none !important; }
header { display: flex; gap: 1rem; align-items: center; padding: .5rem 1rem; background: #1d2330; color: #fff; }
header h1 { font-size: 1.1rem; margin: 0; }
#who { flex: 1; opacity: .7; }
main { display: grid; grid-template-columns: minmax(260px, 1fr) 3fr; gap: 1rem; padding: 1rem; }
section { background: #fff; border-radius: 6px; padding: .75rem 1rem; box-shadow: 0 1px 2px #0002; min-width: 0; }
h2 { font-size: 1rem; margin: .25rem 0 .5rem; }
ol { list-style: none; margin: 0; padding: 0; }
#runs li, #inbox li { border-bottom: 1px solid #eee; padding: .35rem 0; cursor: pointer; }
#runs li.selected { background: #eef3ff; }
#filters button.active { background: #1d2330; color: #fff; }
button { font: inherit; border: 1px solid #bbb; background: #fff; border-radius: 4px; padding: .15rem .5rem; cursor: pointer; }
button.approve { background: #17803d; color: #fff; border-color: #17803d; }
button.deny { background: #b42318; color: #fff; border-color: #b42318; }
button.cancel { margin: .5rem 0; }
.needs { color: #667; font-style: italic; margin: .5rem 0; }
.status { font-size: .75rem; padding: 0 .4rem; border-radius: 8px; background: #ddd; margin-right: .4rem; }
.status.succeeded { background: #c9f2d6; } .status.failed { background: #f9d0cc; }
.status.awaiting_approval { background: #ffe8a3; } .status.running { background: #cfe0ff; }
.step { border-left: 3px solid #cfe0ff; padding: .25rem .75rem; margin: .75rem 0; }
.meta { color: #667; font-size: .8rem; }
.thought { white-space: pre-wrap; margin: .25rem 0; }
.call { background: #f7f8fa; border-radius: 4px; padding: .4rem .6rem; margin: .4rem 0; }
pre { white-space: pre-wrap; word-break: break-word; margin: .25rem 0; max-height: 24rem; overflow: auto; font-size: .8rem; }
.approval { border: 2px solid #e8b500; border-radius: 6px; padding: .5rem .75rem; margin: .75rem 0; background: #fffbea; }
.answer { border: 2px solid #17803d; border-radius: 6px; padding: .5rem .75rem; white-space: pre-wrap; }
.failure { border: 2px solid #b42318; border-radius: 6px; padding: .5rem .75rem; }
.hint { color: #667; }
#login { max-width: 24rem; margin: 3rem auto; display: grid; gap: .5rem; }
#error { position: fixed; bottom: 1rem; right: 1rem; background: #b42318; color: #fff; padding: .5rem 1rem; border-radius: 4px; }
code { font-size: .8rem; word-break: break-all; }
`
