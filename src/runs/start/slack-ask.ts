import { loadConfig } from '../../config'
import type { EnvVars } from '../../env-vars'
import { stripMention } from '../../slack/payloads'
import { logEvent } from '../log'
import { slackThreadStub, type SlackThreadApi } from '../slack-place'
import type { SlackThread } from '../slack-thread'
import { runStub, type RunView } from '../types'
import { idFromKey } from './run-id'
import { slackAgent } from './slack-agent'
import { StartError } from './start-error'
import { startRun, type StartEnv } from './start-run'

/**
 * A person asking the app something in Slack (docs/architecture.md#slack): a mention in a
 * channel or a group DM, a reply in the thread of an earlier run, or a direct message. A group
 * DM (`mpim`) is handled like a channel: only a mention starts a conversation. The thread is the
 * conversation: a follow-up continues the thread's latest run. A direct message outside a thread
 * continues the DM's latest run if it started within SLACK_DM_CONVERSATION_MINUTES.
 */
export interface SlackAsk {
  eventId: string
  teamId?: string
  user: string
  text: string
  channel: string
  ts: string
  /** The thread the message was posted in (absent at a channel's or DM's top level). */
  thread?: string
  /** A one-to-one direct message with the app (`channel_type: im`; a group DM is not one). */
  im: boolean
  /** An `app_mention`: may start a conversation anywhere the app is. */
  mention: boolean
}

export type SlackAskOutcome =
  | { runId: string; created: boolean; continues: string | null }
  | { ignored: string }
  | { busy: string }
  | { deleted: string }

/** What a Slack ask needs of the Worker: a start's, and the Slack places' objects. */
export type SlackAskEnv<T extends Rpc.DurableObjectBranded | undefined = undefined> =
  StartEnv<T> & { SLACK_THREADS: DurableObjectNamespace<SlackThread> }

/** A private note to the person who asked, in the place they asked (routes/slack/ posts it). */
export type TellAsker = (text: string) => Promise<void>

/**
 * Starts the run a Slack message asks for, or continues its conversation's, or says (`tell`) why
 * not: the conversation's previous run is still working, or was deleted.
 */
export async function answerSlackAsk<T extends Rpc.DurableObjectBranded | undefined>(
  env: SlackAskEnv<T>,
  ask: SlackAsk,
  tell: TellAsker,
): Promise<SlackAskOutcome> {
  const task = stripMention(ask.text).trim()
  if (!task) return { ignored: ask.mention ? 'empty mention' : 'empty message' }
  const now = Date.now()
  const idempotencyKey = `slack-event:${ask.teamId ?? ''}:${ask.eventId}`
  const runId = await idFromKey(idempotencyKey)
  // The run answers in the message's thread, or starts one under the message.
  const threadTs = ask.thread ?? ask.ts
  const where = { ...(ask.teamId ? { teamId: ask.teamId } : {}), channel: ask.channel }
  const threads = env.SLACK_THREADS
  const own = slackThreadStub(threads, { ...where, thread: threadTs })
  const dm = ask.im ? slackThreadStub(threads, where) : undefined
  // Where the conversation is looked up: the thread, or a DM's top level.
  const place = ask.thread || !dm ? own : dm
  // In a channel, a reply without a mention only continues a thread edgeloop already answers in.
  const claim = await place.claim(runId, now, !ask.mention && !ask.im)
  if (!claim.claimed) return { ignored: 'not a thread of an edgeloop run' }
  let previous = claim.previous
  const windowMs = loadConfig(env).slack.dmConversationMinutes * 60_000
  if (previous && place === dm && now - previous.at > windowMs) previous = null

  const stub = previous && !previous.deleted ? runStub(env.RUNS, previous.runId) : undefined
  const view = stub ? await stub.get() : null
  // A run claimed here but not served by its object is still starting, or was deleted (a
  // deletion whose removal of this link has not been delivered yet). A thread is told it was
  // deleted; a DM's top level starts a new conversation (and says why).
  if (previous && !view && (previous.deleted || (await stub!.deletion()))) {
    if (place !== dm) {
      await place.release(runId)
      await noteDeleted(
        env,
        tell,
        ask,
        previous.runId,
        'Mention me in a new message to start over.',
      )
      return { deleted: previous.runId }
    }
    await noteDeleted(env, tell, ask, previous.runId, 'This message starts a new conversation.')
    previous = null
  }
  if (previous && view?.phase !== 'done') {
    await place.release(runId)
    await noteBusy(env, tell, ask, previous.runId, view)
    return { busy: previous.runId }
  }
  // Replies in the new run's thread continue it; the DM remembers its latest run.
  if (place !== own) await own.claim(runId, now)
  if (dm && place !== dm) await dm.claim(runId, now)

  try {
    const previousAgent = previous ? view?.agent.name : undefined
    const asked = slackAgent(loadConfig(env), task, {
      channel: ask.channel,
      ...(previousAgent ? { previousAgent } : {}),
    })
    const { created, view: started } = await startRun(env, {
      task: asked.task,
      ...(asked.agent ? { agent: asked.agent } : {}),
      requestedBy: `slack:${ask.user}`,
      owner: null,
      slack: { ...where, threadTs, userId: ask.user },
      idempotencyKey,
      ...(previous ? { continue: previous.runId } : {}),
    })
    return { runId: started.id, created, continues: previous?.runId ?? null }
  } catch (err) {
    // No run was started: the place must not name it, or every later message would wait on it.
    await releaseAll([place, own, dm], runId)
    if (err instanceof StartError && err.code === 'run_not_finished' && previous) {
      await noteBusy(env, tell, ask, previous.runId, undefined)
      return { busy: previous.runId }
    }
    throw err
  }
}

/** The conversation's previous run was deleted: its history is gone, so nothing continues it. */
async function noteDeleted(
  env: EnvVars,
  tell: TellAsker,
  ask: SlackAsk,
  previousRunId: string,
  next: string,
) {
  const text =
    `The previous request in this conversation (run \`${previousRunId}\`) was deleted, so it ` +
    `cannot be continued. ${next}`
  logEvent(env, 'slack_conversation_deleted', { previousRunId, eventId: ask.eventId })
  await tell(text)
}

async function releaseAll(stubs: (SlackThreadApi | undefined)[], runId: string): Promise<void> {
  for (const stub of new Set(stubs)) await stub?.release(runId)
}

/**
 * The conversation's previous run is still working: a follow-up is not queued (it may depend on
 * an answer the person has not seen yet); they are told, privately, to send it again after.
 */
async function noteBusy(
  env: EnvVars,
  tell: TellAsker,
  ask: SlackAsk,
  previousRunId: string,
  view: RunView | null | undefined,
): Promise<void> {
  const doing =
    view?.status === 'awaiting_approval' ? 'is waiting for an approval' : 'is still working'
  const text =
    `The previous request in this conversation (run \`${previousRunId}\`) ${doing}. ` +
    'Send your message again once it has answered.'
  logEvent(env, 'slack_conversation_busy', { previousRunId, eventId: ask.eventId })
  await tell(text)
}
