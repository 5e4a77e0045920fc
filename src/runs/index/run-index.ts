import { indexBatch, indexQuery } from './run-index-schema'
import { itemActions } from '../pending-item-actions'
import type { RunStatus } from '../types'
import type {
  ApprovalListItemBody,
  PendingApprovalBody,
  RunListItemBody,
  RunPageBody,
} from '../../api/response-schemas'

/**
 * The run index in D1 (docs/architecture.md#events): Durable Objects cannot be enumerated, so each run writes its
 * row here through its outbox. The index may lag a run, never lose it. Its tables: run-index-schema.ts.
 */

/** Characters of the task the list shows. */
export const LISTED_TASK_CHARS = 200

/**
 * What a run writes to the index: its row (a listed run, times in ms) and its pending approvals,
 * as of `version`.
 */
export type RunIndexEntry = Omit<
  RunListItemBody,
  'createdAt' | 'updatedAt' | 'agent' | 'conversation'
> & {
  createdAt: number
  updatedAt: number
  /** The token the run belongs to (runs/run-owner.ts), null: no token's. */
  owner: string | null
  /** The run's agent (absent: written as the default agent's row from before agents). */
  agent?: RunListItemBody['agent']
  /** The run's conversation: its first run's id and the run's position (absent: its own, 0). */
  conversation?: RunListItemBody['conversation']
  /** A child run: the run that delegated it. */
  parentRunId?: string
  /** The run's last event sequence number: an older write never replaces a newer one. */
  version: number
  approvals: IndexedApproval[]
  /**
   * false: the run has never had a pending item, so the index holds none of it to replace (its
   * write is then one statement, not two). Absent: it may have had one.
   */
  everPending?: boolean
}

/** A pending approval as the index stores it: the API's, times in ms, the requester on the row. */
export type IndexedApproval = Omit<
  PendingApprovalBody,
  'requestedBy' | 'requestedAt' | 'expiresAt' | 'actions' | 'href'
> & {
  requestedAt: number
  expiresAt: number
}

/** A run as `GET /v1/runs` lists it, and a pending approval as `GET /v1/approvals` does. */
export type RunListItem = RunListItemBody
export type ApprovalListItem = ApprovalListItemBody

/** A page of a list, shaped as RunPage; `nextCursor` goes back as `cursor`, null on the last. */
export type Page<T> = Omit<RunPageBody, 'items'> & { items: T[] }

/**
 * Writes a run's row and replaces its pending approvals, unless the index has a newer version
 * or the run was deleted; true when the row was written. A run that never had a pending item
 * writes its row alone: most runs never have one, and the DELETE was half of each write's
 * statements (docs/development.md#worker-cpu-per-run-beside-the-peer).
 */
export async function writeRunIndex(db: D1Database, e: RunIndexEntry): Promise<boolean> {
  const current = `EXISTS (SELECT 1 FROM runs WHERE id = ?1 AND version = ?2)`
  const [row] = await indexBatch(db, [
    db
      .prepare(
        `INSERT INTO runs (id, task, status, created_at, updated_at, steps, requested_by, metadata, version,
           conversation_id, conversation_position, agent_name, agent_version, owner, parent_run_id)
         SELECT ?1, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?2, ?10, ?11, ?12, ?13, ?14, ?15
         WHERE NOT EXISTS (SELECT 1 FROM deleted_runs WHERE id = ?1)
         ON CONFLICT (id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at,
           steps = excluded.steps, metadata = excluded.metadata, version = excluded.version
         WHERE excluded.version >= runs.version`,
      )
      .bind(
        e.id,
        e.version,
        e.task.slice(0, LISTED_TASK_CHARS),
        e.status,
        e.createdAt,
        e.updatedAt,
        e.stepCount,
        e.requestedBy,
        e.metadata ? JSON.stringify(e.metadata) : null,
        e.conversation?.id ?? e.id,
        e.conversation?.position ?? 0,
        e.agent?.name ?? null,
        e.agent?.version ?? null,
        e.owner,
        e.parentRunId ?? null,
      ),
    ...(e.everPending === false
      ? []
      : [
          db
            .prepare(`DELETE FROM pending_approvals WHERE run_id = ?1 AND ${current}`)
            .bind(e.id, e.version),
        ]),
    ...e.approvals.map((a) =>
      db
        .prepare(
          `INSERT OR REPLACE INTO pending_approvals
             (run_id, call_id, tool, args, args_hash, reason, requested_by, requested_at, expires_at,
              owner, item)
           SELECT ?1, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12 WHERE ${current}`,
        )
        .bind(
          e.id,
          e.version,
          a.callId,
          a.tool,
          JSON.stringify(a.args),
          a.argsHash,
          a.reason,
          e.requestedBy,
          a.requestedAt,
          a.expiresAt,
          e.owner,
          itemColumn(a),
        ),
    ),
  ])
  return (row?.meta.changes ?? 0) > 0
}

/** The entry as `GET /v1/runs` lists it, with its approvals as `GET /v1/approvals` lists them. */
export function listedEntry(e: RunIndexEntry): { run: RunListItem; approvals: ApprovalListItem[] } {
  const row: RunRow = {
    id: e.id,
    task: e.task.slice(0, LISTED_TASK_CHARS),
    status: e.status,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
    steps: e.stepCount,
    requested_by: e.requestedBy,
    metadata: e.metadata ? JSON.stringify(e.metadata) : null,
    conversation_id: e.conversation?.id ?? e.id,
    conversation_position: e.conversation?.position ?? 0,
    agent_name: e.agent?.name ?? null,
    agent_version: e.agent?.version ?? null,
    parent_run_id: e.parentRunId ?? null,
  }
  return {
    run: runItem(row),
    approvals: e.approvals.map((a) =>
      approvalItem({
        run_id: e.id,
        call_id: a.callId,
        tool: a.tool,
        args: JSON.stringify(a.args),
        args_hash: a.argsHash,
        reason: a.reason,
        requested_by: e.requestedBy,
        requested_at: a.requestedAt,
        expires_at: a.expiresAt,
        item: itemColumn(a),
      }),
    ),
  }
}

/**
 * Takes a deleted run out of the index (its row and its pending approvals) and remembers its id,
 * so a write still in flight cannot list it again. Idempotent.
 */
export async function deleteFromIndex(db: D1Database, id: string, now: number): Promise<void> {
  await indexBatch(db, [
    db.prepare('INSERT OR IGNORE INTO deleted_runs (id, deleted_at) VALUES (?1, ?2)').bind(id, now),
    db.prepare('DELETE FROM pending_approvals WHERE run_id = ?1').bind(id),
    db.prepare('DELETE FROM runs WHERE id = ?1').bind(id),
  ])
}

type RunRow = {
  id: string
  task: string
  status: RunStatus
  created_at: number
  updated_at: number
  steps: number
  requested_by: string
  metadata: string | null
  conversation_id: string | null
  conversation_position: number | null
  agent_name: string | null
  agent_version: string | null
  parent_run_id: string | null
}

/**
 * Runs newest first. The cursor is the last row's (created_at, id): runs started later sort
 * before it, so new runs never shift or repeat the pages that follow.
 */
export async function listRuns(
  db: D1Database,
  query: {
    status?: RunStatus
    conversation?: string
    agent?: string
    /** Only this owner's runs (a token limited to its own runs); absent: every run. */
    owner?: string
    /** The child runs of this run. */
    parent?: string
    limit: number
    cursor?: string
  },
): Promise<Page<RunListItem>> {
  const after = query.cursor ? decodeCursor(query.cursor) : undefined
  const where: string[] = []
  const args: unknown[] = []
  if (query.status) where.push(`status = ?${args.push(query.status)}`)
  if (query.conversation) {
    // Rows from before conversations have no conversation_id: such a run started its own.
    const c = args.push(query.conversation)
    where.push(`(conversation_id = ?${c} OR (conversation_id IS NULL AND id = ?${c}))`)
  }
  if (query.agent) {
    // Rows from before agents have no agent_name: those runs ran as the default agent.
    const a = args.push(query.agent)
    where.push(`(agent_name = ?${a} OR (agent_name IS NULL AND ?${a} = 'default'))`)
  }
  if (query.owner !== undefined) where.push(`owner = ?${args.push(query.owner)}`)
  if (query.parent) where.push(`parent_run_id = ?${args.push(query.parent)}`)
  if (after) {
    const t = args.push(after.t)
    const id = args.push(after.id)
    where.push(`(created_at < ?${t} OR (created_at = ?${t} AND id < ?${id}))`)
  }
  const limit = args.push(query.limit + 1)
  const results = await indexQuery<RunRow>(
    db,
    db
      .prepare(
        `SELECT id, task, status, created_at, updated_at, steps, requested_by, metadata,
           conversation_id, conversation_position, agent_name, agent_version, parent_run_id FROM runs
         ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY created_at DESC, id DESC LIMIT ?${limit}`,
      )
      .bind(...args),
  )
  const page = results.slice(0, query.limit)
  const last = page.at(-1)
  return {
    items: page.map(runItem),
    nextCursor:
      results.length > query.limit && last ? encodeCursor(last.created_at, last.id) : null,
  }
}

type ApprovalRow = {
  run_id: string
  call_id: string
  tool: string
  args: string
  args_hash: string
  reason: string
  requested_by: string
  requested_at: number
  expires_at: number
  /** The item's kind, what it asks and its edit schema, as JSON; NULL in rows of approvals
   * written before other kinds. */
  item: string | null
}

/**
 * Pending approvals across runs, newest first (only `owner`'s runs' if given, only those of runs
 * whose requester starts with `requestedByPrefix` if given, e.g. `slack:`); expired ones are
 * left out. The filters apply before the limit, so a page is full whenever enough items match.
 */
export async function listPendingApprovals(
  db: D1Database,
  query: {
    now: number
    owner?: string
    requestedByPrefix?: string
    limit: number
    cursor?: string
  },
): Promise<Page<ApprovalListItem>> {
  const after = query.cursor ? decodeCursor(query.cursor) : undefined
  const args: unknown[] = [query.now]
  let page = query.owner !== undefined ? `AND owner = ?${args.push(query.owner)}` : ''
  if (query.requestedByPrefix !== undefined) {
    // substr, not LIKE: a prefix holding `_` or `%` is matched as written.
    const prefix = args.push(query.requestedByPrefix)
    page += ` AND substr(requested_by, 1, length(?${prefix})) = ?${prefix}`
  }
  if (after) {
    const t = args.push(after.t)
    const key = args.push(after.id)
    page += ` AND (requested_at < ?${t} OR (requested_at = ?${t} AND run_id || ' ' || call_id < ?${key}))`
  }
  const limit = args.push(query.limit + 1)
  const results = await indexQuery<ApprovalRow>(
    db,
    db
      .prepare(
        `SELECT run_id, call_id, tool, args, args_hash, reason, requested_by, requested_at,
           expires_at, item
         FROM pending_approvals WHERE expires_at > ?1 ${page}
         ORDER BY requested_at DESC, run_id || ' ' || call_id DESC LIMIT ?${limit}`,
      )
      .bind(...args),
  )
  const rows = results.slice(0, query.limit)
  const last = rows.at(-1)
  return {
    items: rows.map(approvalItem),
    nextCursor:
      results.length > query.limit && last
        ? encodeCursor(last.requested_at, `${last.run_id} ${last.call_id}`)
        : null,
  }
}

function runItem(r: RunRow): RunListItem {
  return {
    id: r.id,
    task: r.task,
    status: r.status,
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
    stepCount: r.steps,
    requestedBy: r.requested_by,
    ...(r.metadata ? { metadata: JSON.parse(r.metadata) as Record<string, unknown> } : {}),
    agent: { name: r.agent_name ?? 'default', version: r.agent_version ?? '' },
    conversation: { id: r.conversation_id ?? r.id, position: r.conversation_position ?? 0 },
    ...(r.parent_run_id ? { parentRunId: r.parent_run_id } : {}),
  }
}

function approvalItem(r: ApprovalRow): ApprovalListItem {
  const item = r.item
    ? (JSON.parse(r.item) as Pick<IndexedApproval, 'kind' | 'ask' | 'editSchema'>)
    : { kind: 'approval' as const, ask: null, editSchema: null }
  return {
    runId: r.run_id,
    callId: r.call_id,
    tool: r.tool,
    args: JSON.parse(r.args) as Record<string, unknown>,
    argsHash: r.args_hash,
    reason: r.reason,
    requestedBy: r.requested_by,
    requestedAt: new Date(r.requested_at).toISOString(),
    expiresAt: new Date(r.expires_at).toISOString(),
    ...item,
    ...itemActions(r.run_id, r.call_id, item),
  }
}

/** What the `item` column holds of a pending item. */
function itemColumn(a: IndexedApproval): string {
  return JSON.stringify({ kind: a.kind, ask: a.ask, editSchema: a.editSchema })
}

/** Thrown for a cursor this server did not make (the route answers 400). */
export class InvalidCursorError extends Error {
  override name = 'InvalidCursorError'
}

function encodeCursor(t: number, id: string): string {
  return btoa(JSON.stringify([t, id]))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '')
}

/** What encodeCursor writes: base64url without padding (the OpenAPI document says the same). */
export const CURSOR_PATTERN = /^[A-Za-z0-9_-]{1,400}$/

function decodeCursor(cursor: string): { t: number; id: string } {
  if (!CURSOR_PATTERN.test(cursor)) {
    throw new InvalidCursorError('cursor is not one this server returned; start without it')
  }
  try {
    const [t, id] = JSON.parse(atob(cursor.replaceAll('-', '+').replaceAll('_', '/'))) as unknown[]
    if (typeof t === 'number' && Number.isFinite(t) && typeof id === 'string') return { t, id }
  } catch {
    // fall through: not one of ours
  }
  throw new InvalidCursorError('cursor is not one this server returned; start without it')
}
