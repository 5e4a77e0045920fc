/**
 * `npm run eval -- --from-run | --replay | --remodel` (docs/evals.md#record-and-replay): recorded
 * runs, replayed through the kernel in this process. Part of scripts/eval-main.ts's bundle.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { AGENT_CATALOG } from '../agents/catalog'
import type { EvalCase } from '../agents/define-eval'
import { createModel } from '../src/llm/create-model'
import {
  caseFromRecording,
  diffReplay,
  diffText,
  recordingFromExport,
  replay,
  type EvalArgs,
  type EvalFile,
  type Recording,
} from '../src/evals/index'

/** `--from-run`: the run's export becomes a case of its agent, once it replays as recorded. */
export async function fromRun(args: EvalArgs, root: string, filesDir: string): Promise<number> {
  const source = args.fromRun!
  let doc: unknown
  if (/\.json$/i.test(source)) {
    doc = JSON.parse(await readFile(resolve(root, source), 'utf8'))
  } else {
    const url = args.url ?? process.env.EDGELOOP_URL
    const token = process.env.EDGELOOP_TOKEN
    if (!url || !token) {
      console.error(
        '--from-run <run id> reads the run from a deployment: set --url (or EDGELOOP_URL) and EDGELOOP_TOKEN, or pass an export file',
      )
      return 2
    }
    const res = await fetch(new URL(`/v1/runs/${encodeURIComponent(source)}/export`, url), {
      headers: { authorization: `Bearer ${token}` },
    })
    if (!res.ok) {
      console.error(
        `GET /v1/runs/${source}/export answered ${res.status}: ${(await res.text()).slice(0, 300)}`,
      )
      return 2
    }
    doc = await res.json()
  }
  const rec = recordingFromExport(doc)
  const replayed = await replay(rec, { instructions: currentInstructions(rec) })
  const diffs = diffReplay(rec, replayed)
  if (diffs.length) {
    console.error(
      `run ${rec.runId} does not replay as recorded with this code (was it recorded by another version?):\n${diffText(diffs)}`,
    )
    return 1
  }
  rec.requests = replayed.requests
  const file = join(filesDir, `${rec.agent.replaceAll('_', '-')}.recorded.eval.json`)
  const existing = await readFile(file, 'utf8').then(
    (t) => JSON.parse(t) as { agent: string; cases: EvalCase[] },
    () => ({ agent: rec.agent, cases: [] as EvalCase[] }),
  )
  const c = caseFromRecording(rec)
  existing.cases = [...existing.cases.filter((x) => x.name !== c.name), c]
  await mkdir(dirname(file), { recursive: true })
  await writeFile(file, `${JSON.stringify(existing, null, 2)}\n`)
  console.log(`wrote case ${c.name} (${rec.steps.length} steps) to ${file}`)
  return 0
}

/** The instructions the agent has now (a changed prompt shows in the replay's diff). */
function currentInstructions(rec: Recording): string | null {
  const agent = AGENT_CATALOG.find((a) => a.name === rec.agent)
  return agent ? agent.instructions.trim() || null : rec.instructions
}

/** `--replay` and `--remodel`: every recorded case of the chosen agents. */
export async function replayAll(args: EvalArgs, files: EvalFile[], root: string): Promise<number> {
  const recorded = files.flatMap((f) =>
    f.cases.filter((c) => c.recording).map((c) => ({ f, c, rec: c.recording as Recording })),
  )
  if (!recorded.length) {
    console.error(
      'no recorded cases: make one with npm run eval -- --from-run <run id | export.json>',
    )
    return 2
  }
  const instructions = args.instructions
    ? await readFile(resolve(root, args.instructions), 'utf8')
    : undefined
  let differing = 0
  for (const { f, c, rec } of recorded) {
    const options =
      args.mode === 'remodel'
        ? {
            instructions: instructions?.trim() ?? currentInstructions(rec),
            liveReads: args.liveReads,
            ...(args.model ? { model: modelFor(args.model) } : {}),
          }
        : { instructions: currentInstructions(rec) }
    const out = await replay(rec, options)
    const diffs = diffReplay(rec, out)
    const decisions =
      args.mode === 'remodel'
        ? diffs.filter((d) => !/request|thought|result size/.test(d.at))
        : diffs
    if (!decisions.length) {
      console.log(`SAME    ${f.agent}/${c.name}`)
      continue
    }
    differing++
    const label = args.mode === 'remodel' ? 'DIVERGED' : 'DIFFERS'
    console.log(
      `${label} ${f.agent}/${c.name} (recorded run ${rec.runId}), first at ${decisions[0]!.at}:\n${diffText(decisions)}`,
    )
  }
  console.log(
    `${recorded.length - differing}/${recorded.length} recorded cases ${args.mode === 'remodel' ? 'decided as recorded' : 'replay as recorded'}`,
  )
  // A re-model reports; a replay that differs is a regression.
  return args.mode === 'replay' && differing ? 1 : 0
}

/** A model for re-model runs in this process: the settings the Worker would read from env. */
function modelFor(name: string) {
  return createModel(
    {
      baseURL: process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
      ...(process.env.OPENAI_API_KEY ? { apiKey: process.env.OPENAI_API_KEY } : {}),
      model: name,
      temperature: Number(process.env.MODEL_TEMPERATURE ?? 0),
      allowlist: [name],
      protocol: 'auto',
      maxRetries: 2,
      stream: 'off',
    },
    { model: name },
  )
}
