import { sameJson } from '../kernel/canonical'
import type { Recording } from './recording'
import type { Replayed } from './replay'

/** One place where a replay did not do what the recording did. */
export interface Difference {
  /** `step 2 call 1 args`, `result stopReason`, `step 1 request system prompt` … */
  at: string
  recorded: string
  replayed: string
}

/**
 * Every difference between the recording and its replay, step by step: each step's kind,
 * thought, calls (name, arguments, result, decision) and answer, the run's result, and, when the
 * recording has them, what each step sent the model (the system prompt as a line diff).
 */
export function diffReplay(rec: Recording, out: Replayed): Difference[] {
  const diffs: Difference[] = []
  const add = (at: string, recorded: unknown, replayed: unknown) => {
    if (!sameJson(recorded ?? null, replayed ?? null))
      diffs.push({ at, recorded: show(recorded), replayed: show(replayed) })
  }
  const steps = out.state.steps
  add('step count', rec.steps.length, steps.length)
  for (let i = 0; i < Math.min(rec.steps.length, steps.length); i++) {
    const was = rec.steps[i]!
    const now = steps[i]!
    const at = `step ${i + 1}`
    add(`${at} kind`, was.kind, now.kind)
    add(`${at} thought`, was.thought, now.thought)
    add(`${at} answer`, was.answer, now.answer)
    add(`${at} format error`, was.formatError, now.formatError)
    add(
      `${at} calls`,
      was.calls.map((c) => c.name),
      now.calls.map((c) => c.name),
    )
    for (let j = 0; j < Math.min(was.calls.length, now.calls.length); j++) {
      const a = was.calls[j]!
      const b = now.calls[j]!
      add(`${at} call ${j + 1} args`, a.args, b.args)
      add(`${at} call ${j + 1} result kind`, a.kind, b.kind)
      add(`${at} call ${j + 1} decision`, a.decision, b.approval?.decision ?? null)
      // A truncated result is compared by its size: the recording holds it whole.
      if (b.truncated) add(`${at} call ${j + 1} result size`, a.observation.length, b.originalSize)
      else add(`${at} call ${j + 1} result`, a.observation, b.observation)
    }
  }
  const r = out.state.result
  add('result ok', rec.result.ok, r?.ok)
  add('result stopReason', rec.result.stopReason, r?.stopReason)
  add('result answer', rec.result.answer, r?.answer)
  add('result output', rec.result.output, r?.output)
  if (rec.requests) {
    for (let i = 0; i < Math.min(rec.requests.length, out.requests.length); i++) {
      const was = rec.requests[i]!
      const now = out.requests[i]!
      if (was.system !== now.system) {
        diffs.push({
          at: `step ${i + 1} request system prompt`,
          ...lineDiff(was.system, now.system),
        })
      }
      add(`step ${i + 1} request messages (sha-256)`, was.messages, now.messages)
      add(`step ${i + 1} request tools (sha-256)`, was.tools, now.tools)
    }
  }
  return diffs
}

/** The lines between the common beginning and end of two texts, marked - and +. */
export function lineDiff(a: string, b: string): { recorded: string; replayed: string } {
  const x = a.split('\n')
  const y = b.split('\n')
  let start = 0
  while (start < x.length && start < y.length && x[start] === y[start]) start++
  let end = 0
  while (
    end < x.length - start &&
    end < y.length - start &&
    x[x.length - 1 - end] === y[y.length - 1 - end]
  )
    end++
  const mark = (lines: string[], sign: string) =>
    lines
      .slice(start, lines.length - end)
      .map((l) => `${sign} ${l}`)
      .join('\n') || `${sign} (nothing)`
  return {
    recorded: `at line ${start + 1}:\n${mark(x, '-')}`,
    replayed: `at line ${start + 1}:\n${mark(y, '+')}`,
  }
}

function show(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? null)
  return text.length > 300 ? `${text.slice(0, 300)}… (${text.length} characters)` : text
}

/** The differences as lines for the console and the report. */
export function diffText(diffs: readonly Difference[]): string {
  return diffs
    .map(
      (d) =>
        `  ${d.at}:\n    recorded: ${d.recorded.replaceAll('\n', '\n      ')}\n    replayed: ${d.replayed.replaceAll('\n', '\n      ')}`,
    )
    .join('\n')
}
