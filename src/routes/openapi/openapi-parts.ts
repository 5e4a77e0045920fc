import { toJSONSchema, type $ZodType } from 'zod/v4/core'
import { RUN_ID_PATTERN } from '../../kernel/names'
import { CURSOR_PATTERN } from '../../runs/index/run-index'

/** Pieces the OpenAPI document (openapi.ts) repeats: schemas by reference, parameters, shapes. */

export const schema = (s: $ZodType, io: 'input' | 'output') => {
  const { $schema: _s, ...rest } = toJSONSchema(s, { io }) as Record<string, unknown>
  return rest
}
/** A parameter as a route declares it: the part of an OpenAPI 3.1 Parameter Object we use. */
export type Parameter = {
  name: string
  in: 'path' | 'query' | 'header'
  required: boolean
  description?: string
  schema: {
    type: 'string' | 'integer'
    pattern?: string
    enum?: string[]
    minimum?: number
    maximum?: number
    minLength?: number
    maxLength?: number
    default?: string | number
  }
  example?: string
}

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
export const json = (name: string) => ({ content: { 'application/json': { schema: ref(name) } } })
export const ok = (description: string, name: string) => ({ description, ...json(name) })

export const runId: Parameter = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The run id (`run_` and 32 hex digits).',
  schema: { type: 'string', pattern: RUN_ID_PATTERN.source },
}
/** A call id, which names the pending item of that call. */
export const callIdParam: Parameter = {
  name: 'callId',
  in: 'path',
  required: true,
  schema: { type: 'string' },
}

export const cursor: Parameter = {
  name: 'cursor',
  in: 'query',
  required: false,
  description: 'The `nextCursor` of the previous page (base64url, as the server wrote it).',
  schema: { type: 'string', pattern: CURSOR_PATTERN.source },
}
export const limit: Parameter = {
  name: 'limit',
  in: 'query',
  required: false,
  schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
}
export const idempotencyKey: Parameter = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'The same key returns the same run; with another request it is a 409.',
  schema: { type: 'string', minLength: 1, maxLength: 200 },
}
export const traceparent: Parameter = {
  name: 'traceparent',
  in: 'header',
  required: false,
  description:
    "W3C Trace Context: the run's exported spans join this trace, under this span. An invalid one is ignored.",
  schema: { type: 'string', pattern: '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' },
}
export const afterSeq: Parameter = {
  name: 'after',
  in: 'query',
  required: false,
  description: 'Send only events with a greater sequence number.',
  schema: { type: 'integer', minimum: 0, maximum: 999_999_999_999_999 },
}
export const lastEventId: Parameter = {
  name: 'Last-Event-ID',
  in: 'header',
  required: false,
  description:
    'As `after`: an event sequence number of at most 15 digits, spaces around it ignored; ' +
    'EventSource sends it on reconnect. Wins over `after` unless empty.',
  schema: { type: 'string', pattern: '^\\s*[0-9]{0,15}\\s*$' },
}
/** Where a run-list stream resumes: the `id` of its last event, `<epoch>-<number>`. */
export const listAfter: Parameter = {
  name: 'after',
  in: 'query',
  required: false,
  description: 'Resume after this run-list event id (as `Last-Event-ID`).',
  schema: { type: 'string', pattern: '^[0-9a-f]{8}-[0-9]{1,15}$' },
}
export const listLastEventId: Parameter = {
  name: 'Last-Event-ID',
  in: 'header',
  required: false,
  description:
    'The `id` of the last run-list event received (`<epoch>-<number>`); EventSource sends it on reconnect. Wins over `after` unless empty.',
  schema: { type: 'string', pattern: '^\\s*([0-9a-f]{8}-[0-9]{1,15})?\\s*$' },
}
export const bearer = [{ bearer: [] }]
/**
 * A Server-Sent Events answer: `description` of the stream, `frames` of its bytes, and the
 * schema each `data:` holds (`x-item-schema`; OpenAPI 3.2 calls it itemSchema).
 */
export function sseResponse(description: string, frames: string, item: string): SseResponse {
  return {
    description,
    content: {
      'text/event-stream': {
        schema: { type: 'string', description: frames },
        'x-item-schema': ref(item),
      },
    },
  }
}
type SseResponse = {
  description: string
  content: {
    'text/event-stream': {
      schema: { type: 'string'; description: string }
      'x-item-schema': { $ref: string }
    }
  }
}
