/** Token estimates and observation truncation. */

// CJK ideographs, kana, hangul and full-width forms: about one token per character.
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/g
const ANY_CJK = new RegExp(CJK.source)

/** Rough token count: CJK ≈ 1 token per character, everything else ≈ 4 characters per token. */
export function approxTokens(text: string): number {
  // A native step's thought and a call's reply text are mostly empty: no regex call for them
  // (each call of one is about a hundredth of a step, even on empty text).
  if (text.length === 0) return 0
  // V8 stores Latin-1 text one byte a character, and a class of characters above U+00FF cannot
  // match such a string: for most observations this test costs nothing, not a scan.
  if (!ANY_CJK.test(text)) return Math.ceil(text.length / 4)
  let cjk = 0
  CJK.lastIndex = 0
  while (CJK.exec(text)) cjk++
  return cjk + Math.ceil((text.length - cjk) / 4)
}

/**
 * `approxTokens` of the pieces joined, without joining them: when no piece holds CJK (the common
 * case, answered without a scan) the count of the whole follows from the lengths alone.
 */
export function approxTokensJoined(pieces: string[]): number {
  let length = 0
  for (const piece of pieces) {
    if (ANY_CJK.test(piece)) return approxTokens(pieces.join(''))
    length += piece.length
  }
  return Math.ceil(length / 4)
}

export interface Truncated {
  text: string
  /** Characters in the original text. */
  originalSize: number
  truncated: boolean
  /** Estimated tokens left out (0 when not truncated). */
  omittedTokens: number
  /** Estimated tokens of `text` as returned, so nothing counts them again. */
  tokens: number
}

/**
 * Keeps the head and tail of `text` within about `maxTokens`, with an explicit marker in the
 * middle saying how much was left out. Never splits a surrogate pair.
 */
export function truncateObservation(text: string, maxTokens: number): Truncated {
  const total = approxTokens(text)
  if (total <= maxTokens) {
    return { text, originalSize: text.length, truncated: false, omittedTokens: 0, tokens: total }
  }
  return cutObservation(text, total, maxTokens)
}

/**
 * `text` (`total` tokens) cut to about `maxTokens`: a function of its own, so the check every
 * observation passes stays small (docs/development.md#kernel-performance).
 */
function cutObservation(text: string, total: number, maxTokens: number): Truncated {
  // Characters per token in this text, so CJK and ASCII both land near the budget.
  const charsPerToken = text.length / total
  const keep = Math.max(2, Math.floor(maxTokens * charsPerToken * 0.9))
  let headEnd = Math.ceil(keep * 0.6)
  let tailStart = text.length - (keep - headEnd)
  if (isLowSurrogate(text.charCodeAt(headEnd))) headEnd--
  if (isLowSurrogate(text.charCodeAt(tailStart))) tailStart++
  const omitted = approxTokens(text.slice(headEnd, tailStart))
  const cut = `${text.slice(0, headEnd)}\n…[truncated about ${omitted} tokens]…\n${text.slice(tailStart)}`
  return {
    text: cut,
    originalSize: text.length,
    truncated: true,
    omittedTokens: omitted,
    tokens: approxTokens(cut),
  }
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff
}
