/**
 * Block Kit inputs for a JSON Schema and back (docs/slack-app.md#modals): a flat object schema
 * (strings, numbers, integers, booleans, string enums) becomes one input per field; anything
 * else one JSON text input. What a person submits is read back into a value, each field
 * converted to its schema type; nothing is validated here beyond that (the run checks it).
 */
import type { Block } from './approval-message'
import { truncateText } from './mrkdwn'

/** How an input reads back: the type of the field it stands for. */
export type FieldType = 'string' | 'number' | 'integer' | 'boolean' | 'enum'

/** One field of a flat schema: its name and type. */
export type FieldSpec = [name: string, type: FieldType]

/** The block of the one input of a JSON or free-text modal. */
export const JSON_BLOCK_ID = 'edgeloop_json'
export const TEXT_BLOCK_ID = 'edgeloop_text'
const FIELD_BLOCK_PREFIX = 'f:'
const ACTION_ID = 'value'
// Slack's limits: a plain_text_input holds 3000 characters, a static_select 100 options, a
// modal 100 blocks; a block_id is at most 255 characters.
export const INPUT_LIMIT = 3000
const MAX_FIELDS = 40
const MAX_OPTIONS = 100
const LABEL_LIMIT = 2000
const HINT_LIMIT = 2000
const BLOCK_ID_LIMIT = 255

type Json = Record<string, unknown>

/** The fields of a flat object schema, or null when one input of JSON must do. */
export function flatFields(schema: unknown): FieldSpec[] | null {
  if (!isObject(schema) || schema.type !== 'object' || !isObject(schema.properties)) return null
  const fields: FieldSpec[] = []
  for (const [name, prop] of Object.entries(schema.properties)) {
    const type = fieldType(prop)
    if (!type || (FIELD_BLOCK_PREFIX + name).length > BLOCK_ID_LIMIT) return null
    fields.push([name, type])
  }
  return fields.length && fields.length <= MAX_FIELDS ? fields : null
}

function fieldType(prop: unknown): FieldType | null {
  if (!isObject(prop)) return null
  if (Array.isArray(prop.enum)) {
    const strings = prop.enum.every((v) => typeof v === 'string' && v.length && v.length <= 75)
    return strings && prop.enum.length && prop.enum.length <= MAX_OPTIONS ? 'enum' : null
  }
  const t = prop.type
  return t === 'string' || t === 'number' || t === 'integer' || t === 'boolean' ? t : null
}

/** One input block per field of `schema`, each filled with `values[name]` (or its default). */
export function fieldBlocks(schema: Json, fields: FieldSpec[], values: Json): Block[] {
  const props = schema.properties as Record<string, Json>
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : []
  return fields.map(([name, type]) => {
    const prop = props[name]!
    const value = name in values ? values[name] : prop.default
    const description = typeof prop.description === 'string' ? prop.description.trim() : ''
    const title = typeof prop.title === 'string' && prop.title.trim() ? prop.title.trim() : name
    return {
      type: 'input',
      block_id: FIELD_BLOCK_PREFIX + name,
      optional: !required.includes(name),
      label: plain(truncateText(title, LABEL_LIMIT).text),
      ...(description ? { hint: plain(truncateText(description, HINT_LIMIT).text) } : {}),
      element: fieldElement(type, prop, value),
    }
  })
}

function fieldElement(type: FieldType, prop: Json, value: unknown): Json {
  switch (type) {
    case 'string': {
      const text = typeof value === 'string' ? value : ''
      return {
        type: 'plain_text_input',
        action_id: ACTION_ID,
        multiline: text.length > 150 || text.includes('\n'),
        max_length: INPUT_LIMIT,
        ...(text ? { initial_value: text } : {}),
      }
    }
    case 'number':
    case 'integer':
      return {
        type: 'number_input',
        action_id: ACTION_ID,
        is_decimal_allowed: type === 'number',
        ...(typeof value === 'number' && Number.isFinite(value)
          ? { initial_value: String(value) }
          : {}),
      }
    case 'boolean':
    case 'enum': {
      const choices = type === 'boolean' ? ['true', 'false'] : (prop.enum as string[])
      const options = choices.map((c) => ({ text: plain(c), value: c }))
      const initial = type === 'boolean' && typeof value === 'boolean' ? String(value) : value
      const selected = options.find((o) => o.value === initial)
      return {
        type: 'static_select',
        action_id: ACTION_ID,
        options,
        ...(selected ? { initial_option: selected } : {}),
      }
    }
  }
}

/** One multiline input holding `value` as JSON (`label` names what it is). */
export function jsonBlock(label: string, value: unknown, hint: string): Block {
  const json = JSON.stringify(value, null, 2)
  return {
    type: 'input',
    block_id: JSON_BLOCK_ID,
    label: plain(label),
    hint: plain(truncateText(hint, HINT_LIMIT).text),
    element: {
      type: 'plain_text_input',
      action_id: ACTION_ID,
      multiline: true,
      max_length: INPUT_LIMIT,
      ...(json ? { initial_value: json } : {}),
    },
  }
}

/** One multiline input for a free-text answer. */
export function textBlock(label: string): Block {
  return {
    type: 'input',
    block_id: TEXT_BLOCK_ID,
    label: plain(label),
    element: { type: 'plain_text_input', action_id: ACTION_ID, multiline: true },
  }
}

/** What a submitted view's `state.values` holds: block id → action id → the element's state. */
export type ViewValues = Record<string, Record<string, Json>>

/** The value read back, or the blocks whose input cannot be read (block id → why). */
export type ReadBack = { ok: true; value: unknown } | { ok: false; errors: Record<string, string> }

/** The submitted fields as an object, each converted to its type; empty optional fields left out. */
export function readFields(values: ViewValues, fields: FieldSpec[]): ReadBack {
  const out: Json = {}
  const errors: Record<string, string> = {}
  for (const [name, type] of fields) {
    const blockId = FIELD_BLOCK_PREFIX + name
    const state = values[blockId]?.[ACTION_ID]
    const raw =
      type === 'boolean' || type === 'enum'
        ? (state?.selected_option as Json | null | undefined)?.value
        : state?.value
    if (typeof raw !== 'string' || raw === '') continue
    if (type === 'string' || type === 'enum') out[name] = raw
    else if (type === 'boolean') out[name] = raw === 'true'
    else {
      const n = Number(raw)
      if (!Number.isFinite(n) || (type === 'integer' && !Number.isInteger(n)))
        errors[blockId] =
          `not ${type === 'integer' ? 'an integer' : 'a number'}: ${raw.slice(0, 40)}`
      else out[name] = n
    }
  }
  return Object.keys(errors).length ? { ok: false, errors } : { ok: true, value: out }
}

/** The JSON input read back and parsed. */
export function readJson(values: ViewValues): ReadBack {
  const raw = values[JSON_BLOCK_ID]?.[ACTION_ID]?.value
  if (typeof raw !== 'string' || !raw.trim())
    return { ok: false, errors: { [JSON_BLOCK_ID]: 'empty: write the value as JSON' } }
  try {
    return { ok: true, value: JSON.parse(raw) as unknown }
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err)
    return { ok: false, errors: { [JSON_BLOCK_ID]: `not valid JSON: ${why.slice(0, 120)}` } }
  }
}

/** The free-text input read back. */
export function readText(values: ViewValues): ReadBack {
  const raw = values[TEXT_BLOCK_ID]?.[ACTION_ID]?.value
  if (typeof raw !== 'string' || !raw.trim())
    return { ok: false, errors: { [TEXT_BLOCK_ID]: 'write an answer, or close and decline' } }
  return { ok: true, value: raw }
}

/**
 * A refusal's problems placed on the blocks they name: a problem about field `x` (`x: …`,
 * `x.y: …`, `answer.x: …`) under `x`'s input, the rest under `fallback`. Each message is cut to what Slack shows.
 */
export function errorsByBlock(
  problems: string[],
  fields: FieldSpec[] | null,
  fallback: string,
): Record<string, string> {
  const errors: Record<string, string> = {}
  const add = (blockId: string, text: string) => {
    errors[blockId] = truncateText(errors[blockId] ? `${errors[blockId]}; ${text}` : text, 300).text
  }
  for (const problem of problems) {
    // An answer's problems name their path under `answer.`; an edit's, the argument itself.
    const path = problem.replace(/^answer\./, '')
    const field = fields?.find(([name]) =>
      [':', '.', '['].some((end) => path.startsWith(`${name}${end}`)),
    )
    if (field) add(FIELD_BLOCK_PREFIX + field[0], problem)
    else add(fallback, problem)
  }
  return errors
}

/** The block id of field `name`'s input. */
export function fieldBlockId(name: string): string {
  return FIELD_BLOCK_PREFIX + name
}

function plain(text: string): { type: 'plain_text'; text: string } {
  return { type: 'plain_text', text }
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
