import type { Context } from 'hono'
import { loadConfig } from '../../config'
import { logEvent } from '../../runs/log'
import { SlackClient } from '../../slack/web-api'
import type { AppEnv } from '../app-env'

// An ephemeral note is a courtesy; the answer Slack waits for must stay well inside its 3 s.
const EPHEMERAL_TIMEOUT_MS = 1_500

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
  const token = c.env.SLACK_BOT_TOKEN
  if (!token) return
  try {
    const client = new SlackClient({
      token,
      baseUrl: loadConfig(c.env).slack.apiUrl,
      maxRetries: 0,
      timeoutMs: EPHEMERAL_TIMEOUT_MS,
    })
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
