/**
 * The live progress line of a run's first thread message (docs/architecture.md#slack): the
 * "Working on it" message is replaced in place with what the run is doing now.
 */
import { escapeMrkdwn, truncateText } from './mrkdwn'

/**
 * What a run is doing, as its thread shows it. Steps count from 1. `rewrote`: the guardrails
 * that let a replacement through so far, as `name (point)`.
 */
export type RunProgress = ProgressOf & { rewrote?: string[] }

type ProgressOf =
  | { doing: 'thinking'; step: number }
  | { doing: 'calling'; step: number; calls: ProgressCall[] }
  | { doing: 'waiting_for_approval'; step: number; calls: ProgressCall[] }
  | {
      doing: 'done'
      ok: boolean
      stopReason: string
      steps: number
      tokens: number
      costUsd?: number
      /** The guardrail that stopped the run (docs/guardrails.md). */
      guardrail?: { name: string; point: string; reason: string }
    }

export interface ProgressCall {
  tool: string
  args: Record<string, unknown>
}

// A status line is read at a glance: keep each argument and the whole line short.
const ARG_VALUE_LIMIT = 40
const CALLS_LIMIT = 300
const TASK_LIMIT = 500

/** The whole message: the task as first posted, then the status line under it. */
export function progressText(input: {
  runId: string
  task: string
  progress: RunProgress
}): string {
  const { progress } = input
  const task = truncateText(escapeMrkdwn(input.task.trim()), TASK_LIMIT)
  const icon =
    progress.doing !== 'done'
      ? ':hourglass_flowing_sand: Working on it'
      : progress.ok
        ? ':white_check_mark: Done'
        : ':x: Failed'
  const head = `${icon} (run \`${input.runId}\`): ${task.text}${task.truncated ? '…' : ''}`
  return `${head}\n${statusLine(progress)}`
}

/** `step 3 · search_logs(service=gateway) …`, `waiting for approval`, `done in 5 steps · …`. */
export function statusLine(progress: RunProgress): string {
  const rewrote = progress.rewrote?.length
    ? ` · guardrail rewrote: ${escapeMrkdwn(progress.rewrote.join(', '))}`
    : ''
  return doingLine(progress) + rewrote
}

function doingLine(progress: RunProgress): string {
  switch (progress.doing) {
    case 'thinking':
      return `step ${progress.step} · thinking …`
    case 'calling':
      return `step ${progress.step} · ${callList(progress.calls)} …`
    case 'waiting_for_approval':
      return `step ${progress.step} · waiting for approval: ${callList(progress.calls)}`
    case 'done': {
      const steps = `${progress.steps} step${progress.steps === 1 ? '' : 's'}`
      const figures = [`${groupDigits(progress.tokens)} tokens`]
      if (progress.costUsd !== undefined) figures.push(dollars(progress.costUsd))
      const g = progress.guardrail
      const what = progress.ok
        ? `done in ${steps}`
        : g
          ? `stopped by guardrail ${g.name} at ${g.point} after ${steps}: ${shortLine(g.reason)}`
          : `stopped (${progress.stopReason}) after ${steps}`
      return [what, ...figures].join(' · ')
    }
  }
}

/** `search_logs(service=gateway), http_get(url=https://…)`, escaped and cut to one short line. */
function callList(calls: ProgressCall[]): string {
  const text = calls.map((c) => `${c.tool}(${argList(c.args)})`).join(', ')
  const cut = truncateText(escapeMrkdwn(text.replace(/\s+/g, ' ')), CALLS_LIMIT)
  return cut.truncated ? `${cut.text}…` : cut.text
}

function argList(args: Record<string, unknown>): string {
  return Object.entries(args)
    .map(([key, value]) => {
      const shown = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null')
      return `${key}=${shown.length > ARG_VALUE_LIMIT ? shown.slice(0, ARG_VALUE_LIMIT) + '…' : shown}`
    })
    .join(', ')
}

/** A reason on one short escaped line. */
function shortLine(text: string): string {
  const cut = truncateText(escapeMrkdwn(text.replace(/\s+/g, ' ')), ARG_VALUE_LIMIT * 3)
  return cut.truncated ? `${cut.text}…` : cut.text
}

/** 2310 → `2,310` (no Intl: the same in every runtime). */
function groupDigits(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
}

/** `$0.004`, `$1.25`; a cost too small to show as a tenth of a cent is `<$0.001`. */
function dollars(usd: number): string {
  if (usd === 0) return '$0'
  if (usd < 0.001) return '<$0.001'
  return usd < 1 ? `$${usd.toFixed(3)}` : `$${usd.toFixed(2)}`
}
