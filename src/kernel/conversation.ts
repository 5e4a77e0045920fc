import { canonicalJson } from './canonical'
import { observationHandle } from './step-messages'
import type { Conversation, ConversationView, Turn } from './conversation-schema'
import { KernelUsageError } from '../errors/kernel-usage-error'
import type { Call, RunState } from './state'
import { approxTokens } from './tokens'

export type { ConversationView } from './conversation-schema'

/**
 * Conversations (docs/architecture.md#conversations): a run may continue a finished one, and its
 * requests then start with the earlier runs as compact turns. The history is built and frozen
 * when the follow-up is created; nothing here runs again during the run.
 */

/** A turn shows at most this much of its task and of its answer (the rest is in its trace). */
export const TURN_TASK_CHARS = 2_000
export const TURN_ANSWER_CHARS = 4_000
/** Each listed call shows at most this much of its arguments (canonical JSON). */
export const TURN_ARGS_CHARS = 300
/** A turn lists at most this many calls, then says how many more there were. */
export const TURN_CALLS = 8

const HEADER =
  'Earlier in this conversation (oldest first). Tool observations are not repeated here: ' +
  'read one with read_observation and the handle shown.'

/** What a finished run hands the run that continues it: every turn the follow-up may show. */
export interface FollowUpSource {
  conversationId: string
  /** The follow-up's place in the conversation. */
  position: number
  /** The follow-up's earlier runs, oldest first (the last is the finished run). */
  earlierRuns: string[]
  /** The candidate turns, oldest first: the finished run's own history and its own turn. */
  turns: Turn[]
  /** Turns the finished run had already dropped (they stay dropped). */
  droppedTurns: number
}

/** The conversation facts the run view and the trace show. */

export function conversationView(state: RunState): ConversationView {
  const c = state.conversation
  if (!c) {
    return { id: state.id, position: 0, previousRunId: null, historyTurns: 0, droppedTurns: 0 }
  }
  return {
    id: c.id,
    position: c.position,
    previousRunId: c.earlierRuns.at(-1) ?? null,
    historyTurns: c.turns.length,
    droppedTurns: c.droppedTurns,
  }
}

/** What `state`, a finished run, gives a follow-up. Throws `KernelUsageError` if it is not done. */
export function followUpSource(state: RunState): FollowUpSource {
  if (state.phase !== 'done' || !state.result) {
    throw new KernelUsageError(
      `run ${state.id} is ${state.phase}: only a finished run can be continued`,
      'run_not_finished',
    )
  }
  const c = state.conversation
  const position = c ? c.position : 0
  return {
    conversationId: c ? c.id : state.id,
    position: position + 1,
    earlierRuns: [...(c?.earlierRuns ?? []), state.id],
    turns: [...(c?.turns ?? []), turnOf(state, position)],
    droppedTurns: c?.droppedTurns ?? 0,
  }
}

/**
 * The follow-up's conversation: the newest turns whose history message fits
 * `maxHistoryTokens`; the oldest go first, and a stub says how many.
 */
export function continueConversation(
  source: FollowUpSource,
  maxHistoryTokens: number,
): Conversation {
  const all = source.turns
  for (let kept = all.length; kept >= 0; kept--) {
    const turns = all.slice(all.length - kept)
    const droppedTurns = source.droppedTurns + all.length - kept
    const prompt = historyPrompt(turns, droppedTurns)
    const tokens = approxTokens(prompt)
    if (tokens <= maxHistoryTokens || kept === 0) {
      return {
        id: source.conversationId,
        position: source.position,
        earlierRuns: source.earlierRuns,
        turns,
        droppedTurns,
        prompt,
        tokens,
      }
    }
  }
  throw new Error('unreachable: kept = 0 always returns')
}

/**
 * The handle by which a later run of the conversation reads an observation of run `runId`
 * (`<run id>/obs_<call id>`); a handle without a run is the reading run's own.
 */
export function conversationHandle(runId: string, callId: string): string {
  return `${runId}/${observationHandle(callId)}`
}

/** The run and the run-local handle of a conversation handle, or null for a run-local one. */
export function splitConversationHandle(handle: string): { runId: string; handle: string } | null {
  const slash = handle.indexOf('/')
  if (slash <= 0 || slash === handle.length - 1) return null
  return { runId: handle.slice(0, slash), handle: handle.slice(slash + 1) }
}

function historyPrompt(turns: Turn[], droppedTurns: number): string {
  const parts = [HEADER]
  if (droppedTurns > 0) {
    parts.push(
      `[${droppedTurns} earlier ${droppedTurns === 1 ? 'turn' : 'turns'} left out to fit the history limit]`,
    )
  }
  for (const turn of turns) parts.push(turn.text)
  return parts.join('\n\n')
}

/** A finished run as one compact turn: its task, the calls it made, its answer or failure. */
function turnOf(state: RunState, position: number): Turn {
  const result = state.result!
  const calls = state.steps.flatMap((s) => s.calls)
  const lines = [
    `Turn ${position + 1} (run ${state.id})`,
    `Task: ${cut(state.task, TURN_TASK_CHARS)}`,
  ]
  if (calls.length) {
    lines.push('Tools called:')
    for (const call of calls.slice(0, TURN_CALLS)) lines.push(`- ${callLine(state.id, call)}`)
    if (calls.length > TURN_CALLS) lines.push(`- … and ${calls.length - TURN_CALLS} more calls`)
  } else {
    lines.push('Tools called: none')
  }
  lines.push(
    result.ok
      ? `Answer: ${cut(result.answer, TURN_ANSWER_CHARS)}`
      : `Failed (${result.stopReason}): ${cut(result.error ?? 'no answer', TURN_ANSWER_CHARS)}`,
  )
  const text = lines.join('\n')
  return {
    runId: state.id,
    position,
    ok: result.ok,
    stopReason: result.stopReason,
    text,
    tokens: approxTokens(text),
  }
}

function callLine(runId: string, call: Call): string {
  const args = cut(canonicalJson(call.args), TURN_ARGS_CHARS)
  const outcome = call.kind && call.kind !== 'ok' ? ` (${call.kind})` : ''
  const handle =
    call.observation !== null
      ? ` → read_observation handle "${conversationHandle(runId, call.id)}"`
      : ' → no result'
  return `${call.name} ${args}${outcome}${handle}`
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text
  // Never split a surrogate pair.
  let end = max
  const code = text.charCodeAt(end - 1)
  if (code >= 0xd800 && code <= 0xdbff) end--
  return `${text.slice(0, end)}… [${text.length - end} more characters]`
}
