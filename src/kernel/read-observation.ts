import * as z from 'zod/mini'
import { defineTool } from './tool'
import { approxTokens } from './tokens'

export const READ_OBSERVATION = 'read_observation'
/** A slice is capped so that reading it back never needs truncating again. */
export const MAX_SLICE_CHARS = 4000
/** CJK text is about a token a character: a slice is also capped by tokens (half the default limit). */
export const MAX_SLICE_TOKENS = 1000

/** Built-in read-only tool: further slices of an observation that was too long to show whole. */
export const readObservationTool = defineTool({
  name: READ_OBSERVATION,
  description:
    'Read more of an earlier observation that was truncated. Use the handle named in the ' +
    `truncation note; offset is the character to start at (0 = beginning); length at most ${MAX_SLICE_CHARS}. ` +
    'A slice may come back shorter to fit the observation limit: continue at the offset it names.',
  params: z.object({
    handle: z.string().check(z.minLength(1)),
    offset: z.number().check(z.int(), z.minimum(0)),
    length: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(MAX_SLICE_CHARS))),
  }),
  returns: 'The requested characters, with the range shown and how many remain.',
  timeoutMs: 5_000,
  async handler({ handle, offset, length }, ctx) {
    const text = await ctx.observations.get(handle)
    if (text === undefined) throw new Error(`no stored observation with handle "${handle}"`)
    if (offset >= text.length) {
      throw new Error(
        `offset ${offset} is past the end (the observation has ${text.length} characters)`,
      )
    }
    // The slice must fit the run's observation limit (less room for the two note lines), or it
    // would itself be truncated and stored again.
    const maxTokens = Math.max(20, Math.min(MAX_SLICE_TOKENS, ctx.maxObservationTokens - 60))
    const end = sliceEnd(
      text,
      offset,
      Math.min(text.length, offset + (length ?? MAX_SLICE_CHARS)),
      maxTokens,
    )
    const remaining = text.length - end
    return (
      `[${handle} characters ${offset}–${end} of ${text.length}]\n${text.slice(offset, end)}\n` +
      (remaining > 0
        ? `[${remaining} characters remain; continue with offset ${end}]`
        : '[end of observation]')
    )
  },
})

/** The end of a slice from `offset`: at most `end`, at most `maxTokens`, whole characters. */
function sliceEnd(text: string, offset: number, end: number, maxTokens: number): number {
  if (approxTokens(text.slice(offset, end)) <= maxTokens) return end
  let lo = offset + 1
  let hi = end
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (approxTokens(text.slice(offset, mid)) <= maxTokens) lo = mid
    else hi = mid - 1
  }
  // Never split a surrogate pair.
  const code = text.charCodeAt(lo)
  if (code >= 0xdc00 && code <= 0xdfff) lo += lo - 1 > offset ? -1 : 1
  return lo
}

/** An in-memory store for runs outside a Durable Object. */
export class MemoryObservationStore {
  readonly #map = new Map<string, string>()
  put(handle: string, text: string): void {
    this.#map.set(handle, text)
  }
  get(handle: string): string | undefined {
    return this.#map.get(handle)
  }
}
