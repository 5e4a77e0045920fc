import type { Context } from 'hono'
import { loadConfig } from '../../config'
import { logEvent } from '../../runs/log'
import { SlackClient } from '../../slack/web-api'
import type { AppEnv } from '../app-env'

// A call made while Slack waits for our answer (an ephemeral note, a modal opened) must stay
// well inside its 3 s: one attempt, bounded.
const INTERACTIVE_TIMEOUT_MS = 1_500

/** A Web API client for calls made while Slack waits for our answer; null without a bot token. */
export function interactiveClient(c: Context<AppEnv>): SlackClient | null {
  const token = c.env.SLACK_BOT_TOKEN
  if (!token) return null
  return new SlackClient({
    token,
    baseUrl: loadConfig(c.env).slack.apiUrl,
    maxRetries: 0,
    timeoutMs: INTERACTIVE_TIMEOUT_MS,
  })
}

/** Who gets a private note, where. */
export interface EphemeralNote {
  channel: string
  user: string
  threadTs?: string | undefined
  text: string
}

/**
 * An ephemeral note to one user (`chat.postEphemeral`), sent once without retries; without a bot
 * token it is skipped, and a Slack failure is logged, never an error for Slack.
 */
export async function postEphemeralNote(c: Context<AppEnv>, note: EphemeralNote): Promise<void> {
  const client = interactiveClient(c)
  if (!client) return
  try {
    await client.postEphemeral({
      channel: note.channel,
      user: note.user,
      text: note.text,
      ...(note.threadTs ? { thread_ts: note.threadTs } : {}),
    })
  } catch (err) {
    const error = (err as Error).message
    logEvent(c.env, 'slack_ephemeral_failed', { channel: note.channel, error }, 'warn')
  }
}
