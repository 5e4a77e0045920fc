import type { RunState } from '../kernel/state'
import type { EnvVars } from '../env-vars'
import { logEvent } from './log'
import type { Outbox } from './outbox/outbox'
import type { SlackPlace } from './outbox/outbox-kinds'
import { ownerOf } from './run-owner'
import { queueChildCancels } from './delivery/family-delivery'
import type { RunInfo } from './types'

/**
 * Deleting a run (docs/operations.md#deletion): every row of its object goes in one transaction,
 * and only a tombstone stays, so the id is never used again and reads can say it was deleted.
 * The copies elsewhere (the index row, the Slack places that name it) are removed by outbox
 * deliveries queued in that same transaction: retried until done, never lost to a crash.
 */
export interface Tombstone {
  runId: string
  deletedAt: number
  /** A token's name for `DELETE /v1/runs/:id`; `retention` for RUN_RETENTION_DAYS. */
  by: string
}

/** A deletion asked for while a slice runs: the run stops and is wiped when the slice ends. */
export interface DeleteRequest {
  by: string
  at: number
}

/** The storage row keys of the two records (in the run's `run` table). */
export const TOMBSTONE_KEY = 'deleted'
export const DELETE_REQUEST_KEY = 'deleting'

/**
 * Removes every row of the run's object and writes the tombstone and the deliveries that remove
 * the other copies. Call inside `transactionSync`.
 */
export function wipeRun(
  sql: SqlStorage,
  outbox: Outbox,
  state: RunState,
  info: RunInfo,
  tombstone: Tombstone,
): void {
  // Read before the outbox goes: a slash command's thread is its first message's ts.
  const places = slackPlacesOf(info, outbox)
  const tables = sql
    .exec<{ name: string }>(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\'
         AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`,
    )
    .toArray()
  // Every table, not a list of ours: a table added later cannot be forgotten here.
  for (const { name } of tables) sql.exec(`DELETE FROM "${name.replaceAll('"', '""')}"`)
  sql.exec('INSERT INTO run (k, v) VALUES (?, ?)', TOMBSTONE_KEY, JSON.stringify(tombstone))
  const now = tombstone.deletedAt
  // Whose it is: the run-list streams tell only those who could see it that it is gone.
  outbox.enqueue('forget.index', 'forget.index', { owner: ownerOf(info) }, now)
  if (places.length) outbox.enqueue('forget.slack', 'forget.slack', { places }, now)
  // A child never outlives its parent: the ones it still waited for are cancelled.
  queueChildCancels(outbox, state, now)
}

/** The Slack places whose conversation names the run: its thread, and a DM's top level. */
function slackPlacesOf(info: RunInfo, outbox: Outbox): SlackPlace[] {
  const origin = info.slack
  if (!origin) return []
  const where = { ...(origin.teamId ? { teamId: origin.teamId } : {}), channel: origin.channel }
  const thread = origin.threadTs ?? outbox.get('slack.started')?.result?.ts
  const places: SlackPlace[] = thread ? [{ ...where, thread }] : []
  // Direct message channels' ids start with D: there the DM's top level names its latest run.
  if (origin.channel.startsWith('D')) places.push(where)
  return places
}

/** Logs a deletion, naming the side effects whose outcome it leaves unknown. */
export function logDeletion(
  env: EnvVars,
  state: RunState,
  tombstone: Tombstone,
  reason: 'api' | 'retention',
): void {
  const unknown = state.steps.flatMap((s) => s.calls.filter((c) => c.status === 'started'))
  logEvent(env, 'run_deleted', {
    runId: state.id,
    by: tombstone.by,
    reason,
    phase: state.phase,
    // Started and never recorded: they may or may not have taken effect.
    ...(unknown.length ? { outcomeUnknown: unknown.map((c) => `${c.id} (${c.name})`) } : {}),
  })
}
