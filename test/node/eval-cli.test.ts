/**
 * `npm run eval` as a user runs it (scripts/eval.mjs; docs/evals.md): eval files read from a
 * folder (EVAL_FILES_DIR), the Worker in workerd, a provider (the strict fake OpenAI over real
 * HTTP) that fails mid-eval, a judge that passes, fails and answers outside its schema, a baseline
 * that catches the regression, a bad eval file, and `--from-run` then `--replay` of a real run.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FakeOpenAI, reply } from '../fakes/fake-openai'
import { serveFake, type FakeHttpServer } from './fake-http-server'
import { bundleWorker, tempStorage, WorkerRuntime } from './worker-runtime'

const ROOT = join(import.meta.dirname, '..', '..')
let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgeloop-eval-cli-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Runs `node scripts/eval.mjs …` with eval files from `files` and the given environment. */
function evalCli(
  files: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // Partial: with nodejs_compat, the generated Worker types declare wrangler.toml's vars on
  // process.env, and this child process (plain Node) is given none of them.
  const childEnv: Partial<NodeJS.ProcessEnv> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    EVAL_FILES_DIR: files,
    ...env,
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'scripts/eval.mjs'), ...args], {
      cwd: ROOT,
      env: childEnv as NodeJS.ProcessEnv,
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

async function folder(name: string, files: Record<string, string>): Promise<string> {
  const path = join(dir, name)
  await rm(path, { recursive: true, force: true })
  await import('node:fs/promises').then((fs) => fs.mkdir(path, { recursive: true }))
  for (const [file, text] of Object.entries(files)) await writeFile(join(path, file), text)
  return path
}

describe('npm run eval', () => {
  it('a bad eval file: exits 2 naming the file and the field, and runs nothing', async () => {
    const files = await folder('bad', {
      'triage.eval.ts': `export default { agent: 'triage', cases: [{ name: 'x', task: 't', expect: { toolsCalled: [{ args: {} }] } }] }`,
    })
    const out = await evalCli(files, [])
    expect(out.code).toBe(2)
    expect(out.stderr).toMatch(
      /bad\/triage\.eval\.ts: not a valid eval file .*cases\.0\.expect\.toolsCalled\.0/,
    )
  }, 60_000)

  it('a baseline or an export that is not one: exits 2 saying so, before anything runs', async () => {
    const files = await folder('inputs', {
      'triage.eval.ts': `export default { agent: 'triage', cases: [{ name: 'x', task: 't', expect: {} }] }`,
    })
    const notJson = join(dir, 'not-a-report.json')
    await writeFile(notJson, JSON.stringify({ cases: [] }))
    const baseline = await evalCli(files, ['--baseline', notJson])
    expect(baseline.code).toBe(2)
    expect(baseline.stderr).toContain(`--baseline ${notJson}: the baseline is not an eval report`)
    const fromRun = await evalCli(files, ['--from-run', notJson])
    expect(fromRun.code).toBe(2)
    expect(fromRun.stderr.trim()).toBe(
      'not a run export: expected the JSON of GET /v1/runs/:id/export (format "edgeloop.run-export")',
    )
  }, 60_000)

  it('an unknown flag: exits 2 with the usage', async () => {
    const out = await evalCli(await folder('none', {}), ['--kk', '3'])
    expect(out.code).toBe(2)
    expect(out.stderr).toContain('unknown flag --kk')
    expect(out.stderr).toContain('usage: npm run eval')
  }, 60_000)

  it('side effects: approved calls reach only the fakes, each case its own; a request no fake answers fails closed', async () => {
    const files = await folder('fakes', {
      'default.eval.ts': `export default {
  agent: 'default',
  model: 'script',
  cases: [
    {
      name: 'reads-a-faked-page',
      task: 'call http_get with {"url": "https://status.example.test/health"}',
      fakes: [{ url: 'https://status.example.test/*', body: 'all systems normal' }],
      expect: { toolsCalled: ['http_get'], answerContains: ['all systems normal'] },
    },
    {
      name: 'reads-the-same-page-down',
      task: 'call http_get with {"url": "https://status.example.test/health"}',
      fakes: [{ url: 'https://status.example.test/health', status: 503, body: 'major outage' }],
      expect: { answerContains: ['HTTP 503', 'major outage'] },
    },
    {
      name: 'posts-when-approved',
      task: 'call http_post with {"url": "https://hooks.example.test/deploy", "body": {"v": 1}}',
      approvals: { http_post: 'approve' },
      fakes: [{ method: 'POST', url: 'https://hooks.example.test/deploy', status: 201, body: { id: 7 } }],
      expect: { answerContains: ['HTTP 201 Created', '"id": 7'] },
    },
    {
      name: 'denied-unless-named',
      task: 'call http_post with {"url": "https://hooks.example.test/deploy", "body": {"v": 2}}',
      expect: { answerMatches: ['denied'] },
    },
    {
      name: 'unfaked-host-fails-closed',
      task: 'call http_get with {"url": "https://hooks.example.test/status"}',
      expect: { answerContains: ['no fake answers GET https://hooks.example.test/status'] },
    },
  ],
}`,
    })
    const out = await evalCli(files, ['--k', '1', '--out', join(dir, 'fakes-report')], {
      ENABLED_TOOLS: 'http_get,http_post',
      HTTP_ALLOWLIST: 'status.example.test,hooks.example.test',
    })
    expect(out.stdout).toContain('agent default: 5/5 cases pass^1')
    expect(out.code).toBe(0)
  }, 120_000)

  describe('against a provider', () => {
    const api = new FakeOpenAI({ apiKey: 'sk-eval-fake-0123456789' })
    let server: FakeHttpServer
    beforeAll(async () => {
      server = await serveFake(api.handler)
    })
    afterAll(async () => {
      await server.close()
    })

    it('provider failures are errors, judges pass, fail or err, and the baseline catches the regression', async () => {
      const verdict = (v: unknown) => reply.text(JSON.stringify(v))
      api.enqueue(
        // provider-fails: the provider answers 500 (no retries), the run ends model_error.
        reply.error(500, 'upstream overloaded'),
        // judged-pass: the agent's answer, then the judge's verdict.
        reply.text('The answer is 42.'),
        verdict({ verdict: 'pass', reason: 'It says 42.' }),
        // judged-fail
        reply.text('I do not know.'),
        verdict({ verdict: 'fail', reason: 'It gives no number.' }),
        // judge-out-of-schema: every verdict of the judge is outside its schema.
        reply.text('42'),
        ...Array.from({ length: 4 }, () => verdict({ verdict: 'maybe' })),
      )
      const files = await folder('judged', {
        'default.eval.ts': `export default {
  agent: 'default',
  cases: [
    { name: 'provider-fails', task: 'What is 6*7?', expect: { answerContains: ['42'] } },
    { name: 'judged-pass', task: 'What is 6*7?', expect: { judge: { rubric: 'The answer is 42.' } } },
    { name: 'judged-fail', task: 'What is 6*7?', expect: { judge: { rubric: 'The answer is 42.' } } },
    { name: 'judge-out-of-schema', task: 'What is 6*7?', expect: { judge: { rubric: 'The answer is 42.' } } },
  ],
}`,
      })
      const baseline = join(dir, 'baseline.json')
      await writeFile(
        baseline,
        JSON.stringify({
          format: 'edgeloop.eval-report',
          version: 1,
          cases: [{ agent: 'default', name: 'judged-fail', status: 'pass', passHatK: 1 }],
        }),
      )
      const outDir = join(dir, 'report')
      const out = await evalCli(
        files,
        ['--k', '1', '--concurrency', '1', '--out', outDir, '--baseline', baseline],
        {
          MODEL: 'gpt-eval',
          OPENAI_BASE_URL: `${server.origin}/v1`,
          OPENAI_API_KEY: api.apiKey,
          MODEL_MAX_RETRIES: '0',
          MODEL_STREAM: 'off',
        },
      )
      expect(api.untakenViolations()).toEqual([])
      expect(out.stdout).toContain(
        'REGRESSION default/judged-fail: passed in the baseline, fails now',
      )
      expect(out.code).toBe(1)
      // Progress went to stderr while it ran.
      expect(out.stderr).toMatch(/\[1\/4\] provider-fails trial 1: error \(run run_/)
      const report = JSON.parse(await readFile(join(outDir, 'report.json'), 'utf8'))
      const byName = Object.fromEntries(report.cases.map((c: any) => [c.name, c]))
      expect(byName['provider-fails']).toMatchObject({
        status: 'error',
        errored: 1,
        passHatK: null,
      })
      expect(byName['provider-fails'].trials[0].error).toMatch(/^the run ended model_error/)
      expect(byName['judged-pass']).toMatchObject({ status: 'pass', passAtK: 1, passHatK: 1 })
      expect(byName['judged-fail']).toMatchObject({ status: 'fail', passHatK: 0 })
      expect(byName['judged-fail'].trials[0].failures[0]).toMatchObject({
        expectation: 'judge',
        message: expect.stringMatching(/^It gives no number\. \(judge run run_/),
      })
      expect(byName['judge-out-of-schema']).toMatchObject({ status: 'error' })
      expect(byName['judge-out-of-schema'].trials[0].error).toContain(
        'the judge answered outside its verdict schema',
      )
      expect(out.stdout).toMatch(/agent default: 1\/4 cases pass\^1, 1 failing, 2 with errors/)
      // The HTML report stands alone: inline SVG plots, nothing fetched.
      const html = await readFile(join(outDir, 'report.html'), 'utf8')
      expect(html.match(/<svg /g)).toHaveLength(2)
      expect(html).not.toMatch(/<script|<link|src="http|href="http/)
      expect(html).toContain('It gives no number.')
      // Each failed trial's run is kept as its export, and the report links it.
      const failedRun = byName['judged-fail'].trials[0].runId
      const kept = JSON.parse(await readFile(join(outDir, 'runs', `${failedRun}.json`), 'utf8'))
      expect(kept).toMatchObject({ format: 'edgeloop.run-export', run: { id: failedRun } })
      expect(html).toContain(`<a href="runs/${failedRun}.json">`)
    }, 180_000)
  })

  describe('--from-run and --replay', () => {
    let exportFile: string
    beforeAll(async () => {
      const storage = await tempStorage()
      const rt = await WorkerRuntime.start({
        worker: await bundleWorker(),
        storage: storage.path,
        bindings: { API_TOKEN: 'from-run-token', MODEL: 'demo', LOG_LEVEL: 'silent' },
        outbound: async (r) => {
          throw new Error(`unexpected outbound ${r.url}`)
        },
      })
      try {
        const auth = { authorization: 'Bearer from-run-token', 'content-type': 'application/json' }
        const task = 'Read the order service logs for errors since 14:00 UTC.'
        const started = await rt.fetch('/v1/runs', {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ task, agent: 'log_analyst' }),
        })
        const { id } = (await started.json()) as { id: string }
        for (let i = 0; i < 200; i++) {
          const view = (await (await rt.fetch(`/v1/runs/${id}`, { headers: auth })).json()) as {
            status: string
          }
          if (view.status === 'succeeded') break
          await new Promise((r) => setTimeout(r, 50))
        }
        exportFile = join(dir, 'run.json')
        await writeFile(
          exportFile,
          await (await rt.fetch(`/v1/runs/${id}/export`, { headers: auth })).text(),
        )
      } finally {
        await rt.stop()
        await storage.remove()
      }
    }, 120_000)

    it('writes the run as a case that replays as recorded; a changed prompt is a diff (exit 1); re-model reports where a new model diverged', async () => {
      const files = await folder('recorded', {})
      const made = await evalCli(files, ['--from-run', exportFile])
      expect(made.stderr).toBe('')
      expect(made.code).toBe(0)
      const written = join(files, 'log-analyst.recorded.eval.json')
      const file = JSON.parse(await readFile(written, 'utf8'))
      expect(file.agent).toBe('log_analyst')
      expect(file.cases[0].expect.toolOrder).toEqual([
        { name: 'search_logs', args: { service: 'order', query: 'error', limit: 20 } },
      ])
      const same = await evalCli(files, ['--replay'])
      expect(same.stdout).toContain('1/1 recorded cases replay as recorded')
      expect(same.code).toBe(0)
      // As if the agent's instructions had been different when the run was recorded.
      file.cases[0].recording.requests[0].system =
        file.cases[0].recording.requests[0].system.replace(
          'You read application logs',
          'You skim application logs',
        )
      await writeFile(written, JSON.stringify(file))
      const changed = await evalCli(files, ['--replay'])
      expect(changed.code).toBe(1)
      expect(changed.stdout).toContain('DIFFERS log_analyst/run-')
      expect(changed.stdout).toContain('step 1 request system prompt')
      expect(changed.stdout).toContain('- You skim application logs')
      expect(changed.stdout).toContain('+ You read application logs')
      // Re-model: the recorded results fed to another model; where its decisions diverged.
      const remodel = await evalCli(files, ['--remodel', '--model', 'script'])
      expect(remodel.code).toBe(0)
      expect(remodel.stdout).toMatch(
        /DIVERGED log_analyst\/run-\S+ \(recorded run run_\w+\), first at step count/,
      )
      expect(remodel.stdout).toContain('0/1 recorded cases decided as recorded')
      // New instructions, the recorded replies: the same decisions.
      const instructions = join(dir, 'new-instructions.md')
      await writeFile(instructions, 'You read logs. Be brief.')
      const same2 = await evalCli(files, ['--remodel', '--instructions', instructions])
      expect(same2.stdout).toContain('1/1 recorded cases decided as recorded')
    }, 180_000)
  })
})
