/**
 * Record and replay (docs/evals.md#record-and-replay): a run of the on-call demo in the real
 * Worker (workerd, MODEL=demo) is exported, becomes a recording, and replays through the kernel
 * step by step with no difference; a changed prompt and a broken argument parser are each caught
 * as a difference at the step where they show.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createModel } from '../../src/llm/create-model'
import {
  caseFromRecording,
  diffReplay,
  parseEvalFile,
  recordingFromExport,
  replay,
  type Recording,
} from '../../src/evals/index'
import { bundleWorker, tempStorage, WorkerRuntime } from './worker-runtime'

// A parser change, made on purpose: while `broken.parser` is set, tolerant argument parsing
// (what reads a read-only call's arguments) drops each object's last key.
// While `broken.textParser` is set, the text protocol's parser loses the reply's thought.
const broken = vi.hoisted(() => ({ parser: false, textParser: false }))
vi.mock('../../src/kernel/parse/index', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/kernel/parse/index')>()
  return {
    ...real,
    parseArgsTolerant: (raw: string) => {
      const out = real.parseArgsTolerant(raw)
      if (!broken.parser || !out.ok) return out
      const keys = Object.keys(out.value)
      const value = { ...out.value }
      delete value[keys.at(-1)!]
      return { ...out, value }
    },
    parseOutput: (...args: Parameters<typeof real.parseOutput>) => {
      const out = real.parseOutput(...args)
      return broken.textParser ? { ...out, thought: '' } : out
    },
  }
})

// The on-call agent's instructions as the Worker bundles them (agents/oncall.md, trimmed).
const INSTRUCTIONS = readFileSync(
  join(import.meta.dirname, '../../agents/oncall.md'),
  'utf8',
).trim()
const TOKEN = 'eval-replay-token'
const INCIDENT =
  'The order service 5xx rate jumped from 0.1% to 12%. Find the root cause and fix it.'
let runtime: WorkerRuntime
let storage: Awaited<ReturnType<typeof tempStorage>>
let exported: unknown
let exportedText: unknown
let exportedStructured: unknown

async function api(path: string, init: RequestInit = {}): Promise<Response> {
  return runtime.fetch(path, {
    ...init,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
  })
}

async function settle(id: string): Promise<{ status: string; pendingApprovals: any[] }> {
  for (let i = 0; i < 400; i++) {
    const view = (await (await api(`/v1/runs/${id}`)).json()) as any
    if (view.status !== 'running') return view
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`run ${id} did not settle`)
}

beforeAll(async () => {
  storage = await tempStorage()
  runtime = await WorkerRuntime.start({
    worker: await bundleWorker(),
    storage: storage.path,
    bindings: {
      API_TOKEN: TOKEN,
      MODEL: 'demo',
      MODEL_ALLOWLIST: 'script',
      LOG_LEVEL: 'silent',
      CONFIRM_POLICY: 'ask',
    },
    outbound: async (req) => {
      throw new Error(`unexpected outbound ${req.method} ${req.url}`)
    },
  })
  const started = (await (
    await api('/v1/runs', {
      method: 'POST',
      body: JSON.stringify({ task: INCIDENT, agent: 'oncall' }),
    })
  ).json()) as { id: string }
  const waiting = await settle(started.id)
  expect(waiting.status).toBe('awaiting_approval')
  const approval = waiting.pendingApprovals[0]
  const decided = await api(`/v1/runs/${started.id}/approvals/${approval.callId}`, {
    method: 'POST',
    body: JSON.stringify({ decision: 'approve', args_hash: approval.argsHash }),
  })
  expect(decided.status).toBe(200)
  expect((await settle(started.id)).status).toBe('succeeded')
  const res = await api(`/v1/runs/${started.id}/export`)
  expect(res.status).toBe(200)
  exported = await res.json()
  // A text-protocol run of the default agent, its model the task's script.
  const text = (await (
    await api('/v1/runs', {
      method: 'POST',
      body: JSON.stringify({
        task: 'call calculator with {"expression": "6*7"}, then finish with It is 42.',
        model: 'script',
        protocol: 'text',
        tools: ['calculator'],
      }),
    })
  ).json()) as { id: string }
  expect((await settle(text.id)).status).toBe('succeeded')
  exportedText = await (await api(`/v1/runs/${text.id}/export`)).json()
  // A structured answer (the triage agent's ticket), sent through the finish tool.
  const ticket = (await (
    await api('/v1/runs', {
      method: 'POST',
      body: JSON.stringify({
        task: 'finish with {"severity": "sev3", "component": "docs", "summary": "A typo."}',
        agent: 'triage',
        model: 'script',
      }),
    })
  ).json()) as { id: string }
  expect((await settle(ticket.id)).status).toBe('succeeded')
  exportedStructured = await (await api(`/v1/runs/${ticket.id}/export`)).json()
}, 120_000)

afterAll(async () => {
  await runtime?.stop()
  await storage?.remove()
})

/** The recording as `--from-run` writes it: with what each step sent the model. */
async function recorded(): Promise<Recording> {
  const rec = recordingFromExport(exported)
  rec.requests = (await replay(rec, { instructions: INSTRUCTIONS })).requests
  return rec
}

describe('replaying a recorded run', () => {
  it('the export of a finished run becomes a recording of every reply, result and decision', () => {
    const rec = recordingFromExport(exported)
    expect(rec).toMatchObject({
      agent: 'oncall',
      task: INCIDENT,
      result: { ok: true, stopReason: 'finish' },
    })
    expect(rec.steps.map((s) => s.calls.map((c) => c.name))).toEqual([
      ['query_metrics', 'query_metrics'],
      ['ask_log_analyst'],
      ['read_repo_file', 'read_repo_file'],
      ['rollback_deploy'],
      [],
    ])
    expect(rec.steps[3]!.calls[0]).toMatchObject({ decision: 'approved', kind: 'ok' })
    expect(rec.steps[1]!.calls[0]!.observation).toContain('in use 10/10, max 10')
  })

  it('replays step by step with no difference, and the case it makes is a valid eval file', async () => {
    const rec = await recorded()
    expect(rec.requests).toHaveLength(5)
    expect(rec.requests![0]!.system.startsWith(INSTRUCTIONS)).toBe(true)
    const again = await replay(rec, { instructions: INSTRUCTIONS })
    expect(diffReplay(rec, again)).toEqual([])
    const file = parseEvalFile('agents/oncall.recorded.eval.json', {
      agent: 'oncall',
      cases: [caseFromRecording(rec)],
    })
    expect(file.cases[0]!.expect.toolOrder).toHaveLength(6)
    expect(file.cases[0]!.approvals).toEqual({ rollback_deploy: 'approve' })
  })

  it('catches a prompt change: the system prompt differs from the first step, as a line diff', async () => {
    const rec = await recorded()
    const changed = INSTRUCTIONS.replace('on-call engineer', 'on-call intern')
    const diffs = diffReplay(rec, await replay(rec, { instructions: changed }))
    expect(diffs[0]).toMatchObject({ at: 'step 1 request system prompt' })
    expect(diffs[0]!.recorded).toContain('- You are the on-call engineer')
    expect(diffs[0]!.replayed).toContain('+ You are the on-call intern')
    expect(diffs.filter((d) => d.at.includes('system prompt'))).toHaveLength(5)
  })

  it('catches a parser change: the calls read from the same replies differ, and so do their results', async () => {
    const rec = await recorded()
    broken.parser = true
    try {
      const diffs = diffReplay(rec, await replay(rec, { instructions: INSTRUCTIONS }))
      const at = diffs.map((d) => d.at)
      expect(at).toContain('step 1 call 1 args')
      expect(diffs.find((d) => d.at === 'step 1 call 1 args')).toMatchObject({
        recorded: expect.stringContaining('window_minutes'),
        replayed: expect.not.stringContaining('window_minutes'),
      })
    } finally {
      broken.parser = false
    }
  })

  it('a text-protocol run replays too, and a text parser that loses the thought is caught', async () => {
    const rec = recordingFromExport(exportedText)
    expect(rec.protocolSetting).toBe('text')
    rec.requests = (await replay(rec)).requests
    expect(diffReplay(rec, await replay(rec))).toEqual([])
    broken.textParser = true
    try {
      const diffs = diffReplay(rec, await replay(rec))
      expect(diffs[0]).toMatchObject({
        at: 'step 1 thought',
        recorded: 'Step 1 of the script: call calculator.',
        replayed: '',
      })
    } finally {
      broken.textParser = false
    }
  })

  it('a structured answer sent through the finish tool replays as the same output', async () => {
    const rec = recordingFromExport(exportedStructured)
    expect(rec.result.output).toEqual({ severity: 'sev3', component: 'docs', summary: 'A typo.' })
    expect(rec.steps[0]!.reply.toolCalls?.map((c) => c.function.name)).toEqual(['final_answer'])
    const out = await replay(rec)
    expect(diffReplay(rec, out)).toEqual([])
    expect(out.state.result?.output).toEqual(rec.result.output)
  })

  it('re-model: a different model, fed the recorded results, diverges at its first decision', async () => {
    const rec = await recorded()
    // MODEL=script reads the task as a script; the incident is not one, so the new model fails
    // at the first step, and the replay says where.
    const model = createModel(
      {
        baseURL: 'https://unused.test/v1',
        model: 'script',
        temperature: 0,
        allowlist: ['script'],
        protocol: 'auto',
        maxRetries: 0,
        stream: 'off',
      },
      { model: 'script' },
    )
    const out = await replay(rec, { model, instructions: INSTRUCTIONS })
    const diffs = diffReplay(rec, out)
    expect(out.state.result).toMatchObject({ ok: false, stopReason: 'model_error' })
    expect(diffs.map((d) => d.at)).toContain('step count')
    // No tool ran live: nothing past the recording was called.
    expect(out.state.steps.flatMap((s) => s.calls)).toEqual([])
  })
})
