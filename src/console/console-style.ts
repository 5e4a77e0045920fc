/**
 * The console's style sheet (/console/console.css). Two columns on a wide screen; below 700 px
 * one, the open run first. Nothing is wider than the screen: long words, tokens and argument
 * JSON wrap instead. The list's column is wide enough for an agent's longest name (40
 * characters) in the pickers, which cannot wrap.
 */
export const CONSOLE_CSS = `
:root { font: 14px/1.45 system-ui, sans-serif; color: #1d2330; background: #f5f6f8; }
*, *::before, *::after { box-sizing: border-box; }
body { margin: 0; overflow-wrap: anywhere; }
[hidden] { display: none !important; }
header { display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: center; padding: .5rem 1rem; background: #1d2330; color: #fff; }
header h1 { font-size: 1.1rem; margin: 0; display: flex; gap: .4rem; align-items: center; }
#who { flex: 1; opacity: .7; min-width: 0; }
main { display: grid; grid-template-columns: minmax(26rem, 1fr) minmax(0, 3fr); gap: 1rem; padding: 1rem; align-items: start; }
section { background: #fff; border-radius: 6px; padding: .75rem 1rem; box-shadow: 0 1px 2px #0002; min-width: 0; }
h2 { font-size: 1rem; margin: .25rem 0 .5rem; }
h3.waiting { font-size: .95rem; margin: .75rem 0 0; color: #8a5a00; }
ol { list-style: none; margin: 0; padding: 0; }
#runs li, #inbox li { border-bottom: 1px solid #eee; padding: .35rem 0; cursor: pointer; }
#runs li.selected { background: #eef3ff; }
#inbox li strong { display: block; }
#inbox .reason { color: #445; font-size: .85rem; display: -webkit-box; -webkit-line-clamp: 3; -webkit-box-orient: vertical; overflow: hidden; }
#inbox + details, #runs-panel details { margin: .75rem 0; }
#inbox .inbox-actions { margin: .35rem 0; cursor: default; display: flex; flex-wrap: wrap; gap: .35rem; align-items: center; }
#inbox .inbox-actions .question { flex-basis: 100%; font-weight: 600; }
#inbox .inbox-actions input, #inbox .inbox-actions textarea { font: inherit; flex: 1 1 12rem; min-width: 0; max-width: 100%; }
#inbox .edit-form { display: grid; gap: .25rem; width: 100%; }
#inbox .edit-form input, #inbox .edit-form textarea { font: inherit; width: 100%; box-sizing: border-box; }
#filters { display: flex; flex-wrap: wrap; gap: .25rem; margin-bottom: .4rem; }
#filters button.active { background: #1d2330; color: #fff; }
#agent-filter { margin-bottom: .4rem; width: 100%; max-width: 100%; }
#start { display: grid; gap: .35rem; margin-top: .4rem; }
#start textarea, #start select { font: inherit; width: 100%; max-width: 100%; }
summary { cursor: pointer; font-weight: 600; }
button { font: inherit; border: 1px solid #bbb; background: #fff; border-radius: 4px; padding: .15rem .5rem; cursor: pointer; max-width: 100%; }
button.approve { background: #17803d; color: #fff; border-color: #17803d; }
button.deny { background: #b42318; color: #fff; border-color: #b42318; }
button.back { display: none; margin-bottom: .5rem; }
button.jump { margin-left: .5rem; font-size: .8rem; background: #fffbea; border-color: #e8b500; }
button.show-all, button.read-more { font-size: .8rem; margin: .15rem .25rem 0 0; }
.run-controls { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .5rem 0; }
.needs { color: #667; font-style: italic; margin: .5rem 0; }
.status { font-size: .75rem; padding: 0 .4rem; border-radius: 8px; background: #ddd; margin-right: .4rem; white-space: nowrap; }
.status.succeeded { background: #c9f2d6; } .status.failed { background: #f9d0cc; }
.status.awaiting_approval { background: #ffe8a3; } .status.running { background: #cfe0ff; }
.step { border-left: 3px solid #cfe0ff; padding: .25rem .75rem; margin: .75rem 0; }
.step.live { border-left-color: #7fb2ff; }
.meta { color: #667; font-size: .8rem; }
.thought { white-space: pre-wrap; margin: .25rem 0; }
.call { background: #f7f8fa; border-radius: 4px; padding: .4rem .6rem; margin: .4rem 0; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .25rem 0; font-size: .8rem; }
pre.observation { max-height: 40rem; overflow: auto; }
pre.observation.folded { max-height: 7.5em; overflow: hidden; -webkit-mask-image: linear-gradient(#000 60%, transparent); mask-image: linear-gradient(#000 60%, transparent); }
.approval { border: 2px solid #e8b500; border-radius: 6px; padding: .5rem .75rem; margin: .5rem 0 .75rem; background: #fffbea; }
.answer { border: 2px solid #17803d; border-radius: 6px; padding: .5rem .75rem; white-space: pre-wrap; }
.answer.writing { border-style: dashed; }
.failure { border: 2px solid #b42318; border-radius: 6px; padding: .5rem .75rem; }
.guardrail { font-size: .85rem; padding: .25rem .5rem; margin: .25rem 0; border-left: 3px solid #b54708; }
.guardrail.tripwire { border-left-color: #b42318; font-weight: 600; }
.hint { color: #667; }
.family h3 { font-size: .95rem; margin: .75rem 0 .25rem; }
ul.tree { list-style: none; margin: 0; padding: 0 0 0 .25rem; }
ul.tree li { margin: .3rem 0; }
ul.tree code { margin-left: .25rem; }
.child-run { margin: .25rem 0 0 .5rem; padding-left: .5rem; border-left: 2px dashed #c5cbd6; min-width: 0; }
button.link { border: none; padding: 0; color: #2456b3; text-decoration: underline; background: none; text-align: left; }
.step-chart { margin: .75rem 0; }
.step-chart svg { display: block; width: 100%; height: 64px; background: #fafbfc; border-radius: 4px; }
.step-chart .hit { fill: transparent; cursor: pointer; }
.step-chart .column:hover .hit { fill: #eef3ff; }
.step-chart .ms, .key.ms { fill: #4a7fd6; background: #4a7fd6; }
.step-chart .tokens, .key.tokens { fill: #6fbf8e; background: #6fbf8e; }
.step-chart .effect, .key.effect { fill: #e8890c; background: #e8890c; }
.key { display: inline-block; width: .7em; height: .7em; margin-right: .25em; border-radius: 2px; }
#login { max-width: 24rem; margin: 3rem auto; padding: 0 1rem; display: grid; gap: .5rem; }
#login input { max-width: 100%; }
#error { position: fixed; bottom: 1rem; right: 1rem; left: auto; max-width: calc(100vw - 2rem); background: #b42318; color: #fff; padding: .5rem 1rem; border-radius: 4px; }
code { font-size: .8rem; overflow-wrap: anywhere; word-break: break-all; }
@media (max-width: 700px) {
  #who { flex-basis: 100%; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
  main { grid-template-columns: minmax(0, 1fr); gap: .5rem; padding: .5rem; }
  section { padding: .6rem .7rem; }
  main.run-open #run-panel { order: -1; }
  main.run-open button.back { display: inline-block; }
  .step { padding: .25rem .4rem; }
  .call { padding: .35rem .4rem; }
  .child-run { margin-left: .15rem; padding-left: .35rem; }
}
`
