import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

/**
 * `npm run lint:openapi` on the document the Worker serves: no error and no warning, so a new one
 * fails here rather than waiting for someone to run the lint. Problems accepted on purpose are in
 * scripts/openapi-lint-ignore.yaml, each with its reason; their count is pinned so that list
 * changes only on purpose too.
 */

const root = join(import.meta.dirname, '..', '..')

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number }
  problems: { ruleId: string; message: string; location: { pointer?: string }[] }[]
}

describe('npm run lint:openapi', () => {
  it('finds no error and no warning in /openapi.json', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(root, 'scripts/lint-openapi.mjs'), '--format=json'],
      { cwd: root, encoding: 'utf8' },
    )
    const report = JSON.parse(stdout) as LintReport
    const problems = report.problems.map(
      (p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`,
    )
    expect(problems).toEqual([])
    // What scripts/openapi-lint-ignore.yaml accepts, each with its reason there: public GETs that
    // cannot be asked wrongly, so answer no 4xx (this document, /healthz, the A2A agent card;
    // the console's files answer 404 when the deployment lacks one); the connect link, a redirect that never answers 2xx; RunListEvent,
    // named only by the list stream's x-item-schema, which the unused-components rule does not
    // follow; the consent page's answer (POST /authorize), a redirect; and the CORS preflight of
    // /mcp, which answers 204 to any page.
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 6 })
  })
})
