import type { Expectations, ToolCallExpectation } from '../../agents/define-eval'
import { sameJson } from '../kernel/canonical'
import { jsonSchemaOf } from '../kernel/json-schema-of'
import type { RunResult } from '../kernel/trace'
import { outputProblems } from '../validation/output-schema'

/** One expectation a run did not meet: which (`toolsCalled[1]`) and what the run did instead. */
export interface ExpectationFailure {
  expectation: string
  message: string
}

/**
 * Every expectation of a case the run's trace does not meet (empty: it passed), except `judge`,
 * which needs a model (src/evals/judge.ts).
 */
export function checkExpectations(expect: Expectations, run: RunResult): ExpectationFailure[] {
  const failures: ExpectationFailure[] = []
  const fail = (expectation: string, message: string) => failures.push({ expectation, message })
  const wantOk = expect.ok ?? true
  if (run.ok !== wantOk) {
    fail(
      'ok',
      `expected ok: ${wantOk}, the run ended ${run.stopReason}${run.error ? ` (${run.error})` : ''}`,
    )
  }
  if (expect.stopReason !== undefined && run.stopReason !== expect.stopReason) {
    fail('stopReason', `expected ${expect.stopReason}, got ${run.stopReason}`)
  }
  if ('output' in expect && !sameJson(run.output, expect.output)) {
    fail('output', `expected ${json(expect.output)}, got ${json(run.output)}`)
  }
  if (expect.outputMatches && !partialMatch(run.output, expect.outputMatches)) {
    fail(
      'outputMatches',
      `expected to contain ${json(expect.outputMatches)}, got ${json(run.output)}`,
    )
  }
  if (expect.outputSchema !== undefined) {
    const problems =
      run.output === undefined
        ? ['no structured output']
        : outputProblems(jsonSchemaOf(expect.outputSchema), run.output)
    if (problems.length) fail('outputSchema', problems.join('; '))
  }
  const calls = run.steps.flatMap((s) => s.calls.map((c) => ({ name: c.name, args: c.args })))
  for (const [i, want] of (expect.toolsCalled ?? []).entries()) {
    const w = asCall(want)
    if (!calls.some((c) => callMatches(c, w))) {
      fail(`toolsCalled[${i}]`, `no call of ${describe(w)}; calls made: ${listCalls(calls)}`)
    }
  }
  if (expect.toolOrder) {
    let at = 0
    for (const [i, want] of expect.toolOrder.entries()) {
      const w = asCall(want)
      const found = calls.findIndex((c, j) => j >= at && callMatches(c, w))
      if (found < 0) {
        fail(
          `toolOrder[${i}]`,
          `no call of ${describe(w)} after the earlier ones; calls made in order: ${listCalls(calls)}`,
        )
        break
      }
      at = found + 1
    }
  }
  for (const name of expect.toolsNotCalled ?? []) {
    const n = calls.filter((c) => c.name === name).length
    if (n) fail('toolsNotCalled', `${name} was called ${n} time${n > 1 ? 's' : ''}`)
  }
  for (const [i, part] of (expect.answerContains ?? []).entries()) {
    if (!run.answer.includes(part))
      fail(
        `answerContains[${i}]`,
        `the answer does not contain ${json(part)}: ${excerpt(run.answer)}`,
      )
  }
  for (const [i, p] of (expect.answerMatches ?? []).entries()) {
    const re = typeof p === 'string' ? new RegExp(p) : p
    if (!re.test(run.answer))
      fail(`answerMatches[${i}]`, `the answer does not match ${re}: ${excerpt(run.answer)}`)
  }
  if (expect.maxSteps !== undefined && run.steps.length > expect.maxSteps) {
    fail('maxSteps', `${run.steps.length} steps, at most ${expect.maxSteps} expected`)
  }
  const tokens = run.usage.promptTokens + run.usage.completionTokens
  if (expect.maxTokens !== undefined && tokens > expect.maxTokens) {
    fail('maxTokens', `${tokens} tokens, at most ${expect.maxTokens} expected`)
  }
  if (expect.maxCostUsd !== undefined) {
    const cost = run.usage.costUsd
    if (cost === undefined)
      fail(
        'maxCostUsd',
        'the run has no cost: set PRICE_PROMPT_PER_1K_USD and PRICE_COMPLETION_PER_1K_USD',
      )
    else if (cost > expect.maxCostUsd)
      fail('maxCostUsd', `$${cost.toFixed(6)}, at most $${expect.maxCostUsd} expected`)
  }
  return failures
}

/** Whether `actual` holds everything `expected` says: objects by subset, arrays item by item. */
export function partialMatch(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((e, i) => partialMatch(actual[i], e))
    )
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false
    const a = actual as Record<string, unknown>
    return Object.entries(expected).every(([k, v]) => k in a && partialMatch(a[k], v))
  }
  return sameJson(actual, expected)
}

type SeenCall = { name: string; args: Record<string, unknown> }

function asCall(want: string | ToolCallExpectation): ToolCallExpectation {
  return typeof want === 'string' ? { name: want } : want
}

function callMatches(call: SeenCall, want: ToolCallExpectation): boolean {
  return call.name === want.name && (want.args === undefined || partialMatch(call.args, want.args))
}

function describe(want: ToolCallExpectation): string {
  return want.args ? `${want.name} with ${json(want.args)}` : want.name
}

function listCalls(calls: readonly SeenCall[]): string {
  return calls.length ? calls.map((c) => c.name).join(', ') : '(none)'
}

function json(value: unknown): string {
  if (value === undefined) return 'nothing'
  const text = JSON.stringify(value)
  return text.length > 160 ? `${text.slice(0, 160)}…` : text
}

function excerpt(text: string): string {
  return text.length > 160 ? `${JSON.stringify(text.slice(0, 160))}…` : JSON.stringify(text)
}
