import { callFromObject, thoughtKey } from './action-object'
import { markRepaired, type Candidate, type Family, type ToolShapes } from './call'
import { scanObjects } from './json-scan'
import { thoughtBefore } from './prose'

/**
 * The first JSON action object in the text: fenced or bare, inside Hermes/Qwen `<tool_call>`,
 * after Mistral's `[TOOL_CALLS]`, Llama's `<|python_tag|>` or Cohere's `Action:`, alone or as the
 * first of a list.
 */
export function jsonAction(text: string, tools: ToolShapes | undefined): Candidate | undefined {
  let found: Candidate | undefined
  scanObjects(text, (span) => {
    const call = callFromObject(span.value, tools)
    if (!call) return false
    found = {
      at: span.start,
      thought: thoughtBefore(text, span.start) || thoughtKey(span.value),
      call: markRepaired(call, span.repaired),
      family: familyBefore(text, span.start),
    }
    return true
  })
  return found
}

const WINDOW = 64

/** Which family's wrapper the object sits in, read from the text just before it. */
function familyBefore(text: string, at: number): Family {
  const before = text.slice(Math.max(0, at - WINDOW), at)
  if (/<tool_call>\s*$/.test(before)) return 'hermes'
  if (/\[TOOL_CALLS\]\s*\[?\s*$/.test(before)) return 'mistral'
  if (/<\|python_tag\|>\s*$/.test(before)) return 'llama'
  if (/Action[ \t*]*:\s*(?:```[\w-]*\s*)?\[?\s*$/i.test(before)) return 'react'
  return 'json'
}
