/**
 * The bounded pass of the deterministic simulation (`npm run sim -- --quick --self-check`,
 * docs/architecture.md#deterministic-simulation): the first schedules of the exhaustive
 * enumeration for a few small runs, a few seeded random schedules and the seeds that once failed, every invariant checked; then the self-check, which must see each deliberately
 * broken platform caught. The whole exploration is `npm run sim` (minutes; not part of the suite).
 */
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')

describe('deterministic simulation (bounded pass)', () => {
  it('explores schedules with no violation, and catches every broken platform', () => {
    const run = spawnSync(process.execPath, ['scripts/sim.mjs', '--quick', '--self-check'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 110_000,
    })
    const out = `${run.stdout}${run.stderr}`
    expect(out).toMatch(/^violations: 0$/m)
    // Delegated runs (a lead and its children, each in its own object) were explored too.
    expect(out).toMatch(/^delegation \(seeds 1…\d+ and 74\): \d+ schedules/m)
    // Slack-started runs: cards posted to the simulated Web API and clicked in Slack.
    expect(out).toMatch(/^slack \(seeds 1…\d+ and 1001…\d+\): \d+ schedules/m)
    expect(out).toMatch(/cards posted [1-9]\d*,.* Slack clicks [1-9]/)
    expect(out).toMatch(/caught slack_twice: duplicate_slack_message/)
    // People in Slack's modals: edits accepted and answers given, checked; a Slack that loses
    // what was typed in the Edit modal is caught.
    expect(out).toMatch(
      /modals opened [1-9]\d*, edits accepted [1-9]\d*, answers accepted \(modal\) [1-9]\d*, answers pressed \(buttons\) [1-9]/,
    )
    expect(out).toMatch(/caught slack_drops_edit: slack_edit_lost/)
    expect(out).toMatch(/self-check: every broken platform was caught/)
    expect(out).not.toMatch(/MISSED/)
    expect(run.status, out).toBe(0)
  }, 120_000)
})
