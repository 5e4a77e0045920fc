import type { Context } from 'hono'
import { loadConfig } from '../../config'
import { listPendingApprovals } from '../../runs/index/run-index'
import { logEvent } from '../../runs/log'
import { homeView, type HomeItem } from '../../slack/home-view'
import type { ApprovalListItemBody } from '../../api/response-schemas'
import type { AppEnv } from '../app-env'
import { slackPerson } from './slack-decider'
import { interactiveClient } from './slack-ephemeral'

// The Home tab lists what one screen holds; the console's inbox pages through the rest.
const HOME_ITEMS = 21

/**
 * Publishes `userId`'s Home tab (`views.publish`, docs/slack-app.md#app-home): the pending items
 * of Slack-started runs that this person may decide (less `decided`, an item just decided). An
 * approver sees every such item but another person's own connection to grant; anyone sees the
 * connections that are theirs to grant; someone with nothing is told why. A failure is logged:
 * the Home tab is a view, nothing waits on it.
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
  const person = slackPerson(userId)
  const items = (await slackItems(c, approver ? 'slack:' : person)).filter(
    (i) =>
      (i.runId !== decided?.runId || i.callId !== decided.callId) && mayDecide(i, person, approver),
  )
  const notice =
    approver || items.length
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
 * The inbox's items of runs whose requester starts with `prefix` (`slack:` for every Slack-started
 * run, `slack:<user>` for one person's), selected in the index before the limit: other runs'
 * items, however many, take no place.
 */
async function slackItems(c: Context<AppEnv>, prefix: string): Promise<ListedItem[]> {
  const page = await listPendingApprovals(c.env.RUN_INDEX, {
    now: Date.now(),
    requestedByPrefix: prefix,
    limit: HOME_ITEMS,
  })
  return page.items.map(homeItem)
}

/**
 * Whether `person` may act on `item` (the same rules as the card, routes/slack/slack-connect.ts):
 * a per-person connection only by its person; everything else by an approver.
 */
function mayDecide(item: ListedItem, person: string, approver: boolean): boolean {
  if (item.kind !== 'connect' || item.owner === 'deployment') return approver
  return item.owner === person
}

/** A Home item, with whose connection a connect item asks for. */
type ListedItem = HomeItem & { owner: string }

function homeItem(i: ApprovalListItemBody): ListedItem {
  const owner = i.ask?.details?.owner
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
    owner: typeof owner === 'string' ? owner : 'deployment',
  }
}
