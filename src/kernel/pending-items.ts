import { argsHash, canonicalJson } from './canonical'
import { sha256Hex } from '../security/sha256'
import type { Call, PendingItem, PendingKind, PersonAsk } from './state'
import type { PersonRequest, ResolvedItem } from './tool'

export type { PersonRequest, ResolvedItem }

/**
 * Pending items (docs/human-in-the-loop.md#pending-items): what a call waits for from a person.
 * The confirm policy makes `approval` items; a tool makes `question` and `connect` items, before
 * it runs (`Tool.person`) or when it runs (its handler returns `personNeeded(…)`). Every kind has
 * the one lifecycle of approvals.ts: made with the call's step, bound by a hash to exactly what
 * it asks, expiring, decided once.
 */

const PERSON_NEEDED: unique symbol = Symbol.for('edgeloop.person_needed')

/** A handler's result that makes its call wait for a person (see `personNeeded`). */
export interface PersonNeeded {
  readonly [PERSON_NEEDED]: PersonRequest
}

/**
 * Returned by a tool handler that cannot go on without a person (an account to connect, a
 * question its server asked): nothing it did may have changed the world. The call waits on an
 * item of the request's kind; once it is resolved the handler runs again and finds the answer in
 * `ToolContext.person`. A decline or expiry becomes the call's observation.
 */
export function personNeeded(request: PersonRequest): PersonNeeded {
  return { [PERSON_NEEDED]: request }
}

/** The request inside a handler's `personNeeded(…)` result, or null for any other result. */
export function personRequestOf(value: unknown): PersonRequest | null {
  if (typeof value !== 'object' || value === null || !(PERSON_NEEDED in value)) return null
  return (value as PersonNeeded)[PERSON_NEEDED]
}

/** What an item shows a person; null for an approval (its call is what it asks about). */
export function askOf(request: PersonRequest | null): PersonAsk | null {
  if (!request) return null
  return {
    message: request.message,
    choices: request.choices ?? null,
    schema: request.schema ?? null,
    details: request.details ?? null,
  }
}

/**
 * The hash an item binds to: an approval, the call's name and arguments (as it always has); a
 * question or connect item, those and what it asks.
 */
export async function itemHash(
  call: { name: string; args: Record<string, unknown> },
  kind: PendingKind,
  ask: PersonAsk | null,
): Promise<string> {
  if (kind === 'approval') return argsHash(call.name, call.args)
  return sha256Hex(canonicalJson({ name: call.name, args: call.args, kind, ask }))
}

/**
 * A call moved to `awaiting_approval` on a new item of `request`'s kind (none: an approval,
 * editable with `editSchema` when given).
 */
export async function requestItem(
  call: Call,
  now: number,
  ttlSeconds: number,
  request: PersonRequest | null = null,
  editSchema: Record<string, unknown> | null = null,
): Promise<Call> {
  const kind = request?.kind ?? 'approval'
  const ask = askOf(request)
  const item: PendingItem = {
    hash: await itemHash(call, kind, ask),
    requestedAt: now,
    expiresAt: now + ttlSeconds * 1000,
    decision: null,
    decidedBy: null,
    decidedAt: null,
    reason: null,
    kind,
    ask,
    answer: null,
    edit: null,
    editSchema: request ? null : editSchema,
  }
  return { ...call, status: 'awaiting_approval', approval: item }
}

/** The resolved item a handler is shown: a question's answer, a connection's result. */
export function resolvedItem(call: Call): ResolvedItem | null {
  const item = call.approval
  if (!item || item.kind === 'approval' || item.decision !== 'approved') return null
  return { kind: item.kind, answer: item.answer, by: item.decidedBy ?? 'unknown' }
}
