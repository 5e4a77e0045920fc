import type { Context } from 'hono'
import { loadConfig } from '../../config'
import { listPendingApprovals } from '../../runs/index/run-index'
import { logEvent } from '../../runs/log'
import { homeView, type HomeItem } from '../../slack/home-view'
import type { ApprovalListItemBody } from '../../api/response-schemas'
import type { AppEnv } from '../app-env'
import { interactiveClient } from './slack-ephemeral'

// The Home tab lists what one screen holds; the console's inbox pages through the rest.
const HOME_ITEMS = 21

/**
 * Publishes `userId`'s Home tab (`views.publish`, docs/slack-app.md#app-home): the pending items
 * of Slack-started runs, which Slack's approvers decide, when the person is one (less `decided`,
 * an item just decided); else why nothing is listed. A failure is logged: the Home tab is a view, nothing waits on it.
 */
export async function publishHome(
  c: Context<AppEnv>,
  userId: string,
  decided?: { runId: string; callId: string },
): Promise<void> {
  const client = interactiveClient(c)
  if (!client) return
  const approvers = loadConfig(c.env).slack.approvers
  const approver = approvers.includes(userId)
  // The run index learns of a decision after the run stored it: the item just decided is left out.
  const items = (approver ? await slackItems(c) : []).filter(
    (i) => i.runId !== decided?.runId || i.callId !== decided.callId,
  )
  const notice = approver
    ? null
    : approvers.length
      ? 'You are not in SLACK_APPROVERS, so no pending item is yours to decide here.'
      : 'SLACK_APPROVERS is not configured, so nobody decides pending items from Slack.'
  try {
    await client.publishView({ user_id: userId, view: homeView({ items, notice }) })
  } catch (err) {
    logEvent(c.env, 'slack_home_failed', { userId, error: (err as Error).message }, 'warn')
  }
}

/**
 * The inbox's items of runs started from Slack (their items are decided by Slack's approvers),
 * selected in the index before the limit: other runs' items, however many, take no place.
 */
async function slackItems(c: Context<AppEnv>): Promise<HomeItem[]> {
  const page = await listPendingApprovals(c.env.RUN_INDEX, {
    now: Date.now(),
    requestedByPrefix: 'slack:',
    limit: HOME_ITEMS,
  })
  return page.items.map(homeItem)
}

function homeItem(i: ApprovalListItemBody): HomeItem {
  const url = i.ask?.details?.url
  return {
    runId: i.runId,
    callId: i.callId,
    kind: i.kind,
    tool: i.tool,
    args: i.args,
    hash: i.argsHash,
    expiresAt: Date.parse(i.expiresAt),
    message: i.ask?.message ?? null,
    choices: i.ask?.choices ?? null,
    editable: !!i.editSchema,
    url: typeof url === 'string' ? url : null,
  }
}
