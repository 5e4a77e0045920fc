/**
 * A person adds an agent of their own as docs/agents.md#adding-an-agent says (its file in
 * agents/, one line in agents/catalog.ts, a new tool in tools/ and its line in tools/catalog.ts),
 * and the project's own tests still pass: in a copy of this checkout, the tests that list agents,
 * check readiness and start runs, plus a test of the new agent written the way the docs show.
 */
import { spawnSync, execFileSync } from 'node:child_process'
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..')

const COUNTER_TOOL = `import * as z from 'zod/mini'
import { defineTool } from '../src/kernel/tool'

/** Counts the words of a text. */
export const counter = defineTool({
  name: 'counter',
  description: 'Count the words of a text.',
  params: z.object({ text: z.string() }),
  returns: 'The number of words.',
  handler: ({ text }) => String(text.split(/\\s+/).filter(Boolean).length),
})
`
const COUNTER_AGENT = `import { defineAgent } from './define-agent'

export const counterAgent = defineAgent({
  name: 'counter',
  description: 'Counts the words of a text.',
  instructions: 'Count the words of the text you are given with the counter tool.',
  tools: ['counter'],
})
`
// A second agent that uses only a tool the tests already enable: it is offered in them.
const SUMMER_AGENT = `import { defineAgent } from './define-agent'

export const summer = defineAgent({
  name: 'summer',
  description: 'Adds numbers.',
  instructions: 'Add the numbers you are given with the calculator.',
  tools: ['calculator'],
})
`
// The person's own test of the new agent, beside the project's.
const OWN_TEST = `import { describe, expect, it } from 'vitest'
import { AUTH, JSON_AUTH, useServiceFakes } from '../service/harness'
import { fetchWith } from '../service/worker-with'

useServiceFakes()

describe('my agents', () => {
  it('counter is offered once its tool is enabled, and left out with why until then', async () => {
    const tools = 'calculator,http_get,http_post,counter'
    const on = await fetchWith({ ENABLED_TOOLS: tools }, '/v1/agents', { headers: AUTH })
    const names = ((await on.json()) as { agents: { name: string }[] }).agents.map((a) => a.name)
    expect(names).toEqual(expect.arrayContaining(['counter', 'summer']))
    const ready = await fetchWith({}, '/readyz', { headers: AUTH })
    expect(ready.status).toBe(200)
    expect(((await ready.json()) as { warnings: string[] }).warnings).toContainEqual(
      expect.stringMatching(/agent "counter" is not offered .*tools counter not offered/),
    )
    const start = await fetchWith({}, '/v1/runs', {
      method: 'POST',
      headers: JSON_AUTH,
      body: JSON.stringify({ task: 'count: a b c', agent: 'counter' }),
    })
    expect(start.status).toBe(404)
    expect(await start.json()).toMatchObject({
      error: { code: 'agent_not_found', message: expect.stringMatching(/tools counter not offered/) },
    })
  })
})
`

/** The tests of the project's that an added agent used to break, and the new one. */
const SUITE = [
  'test/agents/agents-api.test.ts',
  'test/agents/agent-checks.test.ts',
  'test/client/client-agents.test.ts',
  'test/service/readiness.test.ts',
  'test/api/start-refusals.test.ts',
  'test/service/conversations.test.ts',
  'test/agents/my-agents.test.ts',
]

function addLine(file: string, importLine: string, entry: string, after: string): void {
  const source = readFileSync(file, 'utf8')
  expect(source).toContain(after)
  writeFileSync(file, `${importLine}\n${source.replace(after, `${after}\n  ${entry},`)}`)
}

describe('a person adds an agent and a tool of their own', () => {
  const copy = mkdtempSync(join(tmpdir(), 'edgeloop-own-agent-'))
  afterAll(() => rmSync(copy, { recursive: true, force: true }))

  it("the project's tests still pass, and so does their own", () => {
    const files = execFileSync(
      'git',
      ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    )
      .split('\0')
      .filter(Boolean)
    for (const file of files) {
      mkdirSync(dirname(join(copy, file)), { recursive: true })
      try {
        cpSync(join(ROOT, file), join(copy, file))
      } catch {
        // A file deleted in the work tree but not yet in the index.
      }
    }
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir')
    writeFileSync(join(copy, 'tools/counter.ts'), COUNTER_TOOL)
    writeFileSync(join(copy, 'agents/counter.ts'), COUNTER_AGENT)
    writeFileSync(join(copy, 'agents/summer.ts'), SUMMER_AGENT)
    writeFileSync(join(copy, 'test/agents/my-agents.test.ts'), OWN_TEST)
    addLine(
      join(copy, 'tools/catalog.ts'),
      "import { counter } from './counter'",
      'counter',
      'askPerson,',
    )
    addLine(
      join(copy, 'agents/catalog.ts'),
      "import { counterAgent } from './counter'\nimport { summer } from './summer'",
      'counterAgent,\n  summer',
      'lead,',
    )
    const missing = SUITE.filter((f) => !files.includes(f) && !f.endsWith('my-agents.test.ts'))
    expect(missing).toEqual([])
    const run = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', ...SUITE],
      {
        cwd: copy,
        encoding: 'utf8',
        env: { ...process.env, CI: '1', NO_COLOR: '1' },
        timeout: 480_000,
      },
    )
    const out = `${run.stdout}\n${run.stderr}`
    expect(out, out.slice(-4000)).toMatch(/Test Files {2}7 passed \(7\)/)
    expect(run.status).toBe(0)
  }, 540_000)
})
