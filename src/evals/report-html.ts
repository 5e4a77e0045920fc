import type { CaseReport, EvalReport } from './report'

/**
 * The report as one HTML file (docs/evals.md#the-report): no script, no stylesheet or font from
 * elsewhere, two inline SVG plots (pass rate per case, mean cost per case), the table, and every
 * failure with its run id. Opens from disk or a CI artifact.
 */
export function reportHtml(
  report: EvalReport,
  runLink: (runId: string) => string | null = () => null,
): string {
  const k = report.k
  const rows = report.cases.map((c) => caseRow(c, runLink)).join('\n')
  const agents = report.agents
    .map(
      (a) =>
        `<li><b>${esc(a.agent)}</b>: ${a.passedCases}/${a.cases} cases pass^${k}` +
        `${a.failedCases ? `, ${a.failedCases} failing` : ''}${a.erroredCases ? `, ${a.erroredCases} with errors (not the agent's fault)` : ''}` +
        `, ${a.totalTokens} tokens${a.totalCostUsd === null ? '' : `, $${a.totalCostUsd.toFixed(4)}`}</li>`,
    )
    .join('\n')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>edgeloop eval report ${esc(report.finishedAt)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1d1d1f;max-width:70rem}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}.pass{color:#176f2c}.fail{color:#b3261e}.error{color:#9a6700}
code{font-size:12px}svg text{font:11px system-ui,sans-serif}
</style></head><body>
<h1>Eval report</h1>
<p>${report.cases.length} cases, k = ${k} trials each${report.model ? `, model ${esc(report.model)}` : ''}; ${esc(report.startedAt)} to ${esc(report.finishedAt)}.</p>
<ul>${agents}</ul>
<h2>Pass rate per case</h2>
${barChart(
  report.cases,
  (c) => c.passHatK,
  (v) => `${Math.round(v * 100)}%`,
  1,
  `pass^${k}`,
)}
<h2>Mean cost per case</h2>
${costChart(report.cases)}
<h2>Cases</h2>
<table><thead><tr><th>case</th><th>status</th><th>pass@${k}</th><th>pass^${k}</th><th>trials</th><th>steps</th><th>tokens</th><th>cost</th><th>p50 / p95 ms</th></tr></thead>
<tbody>
${rows}
</tbody></table>
</body></html>
`
}

function caseRow(c: CaseReport, runLink: (runId: string) => string | null): string {
  const pct = (p: number | null) => (p === null ? '-' : `${Math.round(p * 100)}%`)
  const num = (n: number | null) => (n === null ? '-' : String(Math.round(n * 10) / 10))
  const link = (id: string) => {
    const href = runLink(id)
    return href ? `<a href="${esc(href)}"><code>${esc(id)}</code></a>` : `<code>${esc(id)}</code>`
  }
  const why = c.trials
    .flatMap((t) => [
      ...(t.status === 'error'
        ? [
            `trial ${t.trial} <span class="error">error</span>${t.runId ? ` (run ${link(t.runId)})` : ''}: ${esc(t.error ?? '')}`,
          ]
        : []),
      ...t.failures.map(
        (f) =>
          `trial ${t.trial} <b>${esc(f.expectation)}</b>${t.runId ? ` (run ${link(t.runId)})` : ''}: ${esc(f.message)}`,
      ),
    ])
    .map((line) => `<li>${line}</li>`)
    .join('')
  return (
    `<tr><td>${esc(c.agent)}/<b>${esc(c.name)}</b>${c.model ? `<br><small>${esc(c.model)}</small>` : ''}</td>` +
    `<td class="${c.status}">${c.status}</td><td class="n">${pct(c.passAtK)}</td><td class="n">${pct(c.passHatK)}</td>` +
    `<td class="n">${c.passed} pass, ${c.failed} fail, ${c.errored} error</td><td class="n">${num(c.meanSteps)}</td>` +
    `<td class="n">${num(c.meanTokens)}</td><td class="n">${c.meanCostUsd === null ? '-' : `$${c.meanCostUsd.toFixed(5)}`}</td>` +
    `<td class="n">${num(c.p50Ms)} / ${num(c.p95Ms)}</td></tr>` +
    (why ? `\n<tr><td colspan="9"><ul>${why}</ul></td></tr>` : '')
  )
}

/** Mean cost per case; tokens when the deployment has no prices. */
function costChart(cases: readonly CaseReport[]): string {
  const priced = cases.every((c) => c.meanCostUsd !== null)
  if (priced) {
    const max = Math.max(...cases.map((c) => c.meanCostUsd!), 1e-9)
    return barChart(
      cases,
      (c) => c.meanCostUsd,
      (v) => `$${v.toFixed(5)}`,
      max,
      'USD',
    )
  }
  const max = Math.max(...cases.map((c) => c.meanTokens ?? 0), 1)
  return `<p>No prices configured (PRICE_PROMPT_PER_1K_USD …): mean tokens instead.</p>\n${barChart(
    cases,
    (c) => c.meanTokens,
    (v) => `${Math.round(v)} tokens`,
    max,
    'tokens',
  )}`
}

/** A horizontal bar chart, one bar per case, as inline SVG. */
function barChart(
  cases: readonly CaseReport[],
  value: (c: CaseReport) => number | null,
  label: (v: number) => string,
  max: number,
  title: string,
): string {
  const row = 22
  const left = 260
  const width = 360
  const height = cases.length * row + 10
  const bars = cases
    .map((c, i) => {
      const v = value(c)
      const y = i * row + 4
      const w = v === null ? 0 : Math.max(1, (v / max) * width)
      return (
        `<text x="${left - 8}" y="${y + 14}" text-anchor="end">${esc(`${c.agent}/${c.name}`)}</text>` +
        `<rect x="${left}" y="${y + 2}" width="${w.toFixed(1)}" height="${row - 6}" class="${c.status}" fill="${c.status === 'pass' ? '#3c9a55' : c.status === 'fail' ? '#d9534f' : '#d4a72c'}"/>` +
        `<text x="${left + w + 6}" y="${y + 14}">${v === null ? 'no verdict' : esc(label(v))}</text>`
      )
    })
    .join('\n')
  return `<svg role="img" aria-label="${esc(title)} per case" width="${left + width + 120}" height="${height}" viewBox="0 0 ${left + width + 120} ${height}" xmlns="http://www.w3.org/2000/svg">\n${bars}\n</svg>`
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`)
}
