import type { NativeToolCall } from './model'
import { approxTokens } from './tokens'
import type { Pricing } from './transition'

/** What a model reply costs: USD, and the tokens and bytes of its tool calls. */

/** USD for one call; cached prompt tokens at the cached price when one is configured. */
export function stepCost(
  pricing: Pricing,
  promptTokens: number,
  cachedPromptTokens: number,
  completionTokens: number,
): number {
  const cachedPrice = pricing.cachedPromptPer1K
  const cached = cachedPrice === undefined ? 0 : Math.min(cachedPromptTokens, promptTokens)
  return (
    ((promptTokens - cached) * pricing.promptPer1K +
      cached * (cachedPrice ?? 0) +
      completionTokens * pricing.completionPer1K) /
    1000
  )
}

/** Estimated tokens of native tool calls (their arguments, and framing per call). */
export function toolCallTokens(calls: NativeToolCall[] | undefined): number {
  let n = 0
  if (!calls) return n
  for (let k = 0; k < calls.length; k++) n += approxTokens(calls[k]!.function.arguments) + 4
  return n
}

/** Characters of native tool calls' arguments (CPU accounting). */
export function toolCallBytes(calls: NativeToolCall[] | undefined): number {
  let n = 0
  if (!calls) return n
  for (let k = 0; k < calls.length; k++) n += calls[k]!.function.arguments.length
  return n
}
