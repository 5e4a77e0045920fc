/**
 * The MCP conformance suite's client scenarios against the Worker as deployed, through the
 * suite's own CLI and our client command (mcp-conformance/run.ts), measured against the
 * baseline: a scenario that fails unlisted, or passes while listed, fails this test. Each
 * scenario gets a Worker of its own, started from the runner's process, three side by side
 * (figures in docs/mcp.md#conformance); the half hour allowed is for a loaded machine.
 */
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { BASELINE, clientScenarios, runConformance } from './mcp-conformance/run.ts'

describe('MCP conformance suite, client scenarios', () => {
  it('every baseline entry names a scenario of the suite and gives its reason', async () => {
    const scenarios = await clientScenarios()
    const entries = (await readFile(BASELINE, 'utf8'))
      .split('\n')
      .filter((line) => /^\s+- /.test(line))
    expect(entries.length).toBeGreaterThan(0)
    for (const line of entries) {
      const m = /^\s+- (\S+) # (.+)$/.exec(line)
      expect(m, `a reason for: ${line}`).not.toBeNull()
      expect(scenarios).toContain(m![1])
    }
  })

  it('fails only the scenarios the baseline lists', { timeout: 1_800_000 }, async () => {
    const results = await runConformance()
    const disagreeing = results.filter((r) => !r.asExpected)
    expect(disagreeing.map((r) => `${r.scenario}: ${r.problems.join('; ')}`)).toEqual([])
    // The core scenarios pass.
    for (const scenario of ['initialize', 'tools_call']) {
      expect(results.find((r) => r.scenario === scenario)?.passed, scenario).toBe(true)
    }
  })
})
