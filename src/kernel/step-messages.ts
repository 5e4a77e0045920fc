import type { ChatMessage, NativeToolCall, Protocol } from './model'
import type { PromptFormat } from './prompt-format'
import type { Call, Step } from './state'
import { approxTokens, approxTokensJoined } from './tokens'
import { FRAME_CLOSE, frameOf, frameOpen, framedText } from './tool-output'

/**
 * What each step of a run looks like in every later request (docs/architecture.md#step-machine):
 * its messages in either protocol and their estimated tokens, whole or with its observations
 * elided by the context cap.
 */

type Rendered = { messages: ChatMessage[]; tokens: number }

/**
 * The messages one step contributes to every later request, and their estimated tokens. With
 * `elided`, its observations are replaced by stubs that keep their size and handle (the thought
 * and the calls stay): what a step looks like once the context cap has cut it. `format` is the
 * run's prompt format (src/kernel/prompt-format.ts): 1 words observations as runs saved before
 * the `<tool_output>` frame did.
 */
export function stepMessages(
  step: Step,
  protocol: Protocol,
  elided = false,
  format: PromptFormat = 2,
): Rendered {
  const framed = format !== 1
  return protocol === 'native' ? nativeStep(step, elided, framed) : textStep(step, elided, framed)
}

/** What a call's observation becomes in a request once elided; null when the stub is no shorter. */
export function elidedObservation(c: Call): { text: string; tokens: number } | null {
  const tokens = observationTokens(c)
  const text = `[elided: ${tokens} tokens, read_observation("${c.handle ?? observationHandle(c.id)}")]`
  const stub = approxTokens(text)
  return stub < tokens ? { text, tokens: stub } : null
}

/** The handle `read_observation` knows a call's observation by (stored whole, or in the run). */
export function observationHandle(callId: string): string {
  return `obs_${callId}`
}

/** Tokens a step's request messages lose when its observations are elided. */
export function elisionSaving(step: Step): number {
  let saved = 0
  for (const c of step.calls) {
    const stub = elidedObservation(c)
    if (stub) saved += observationTokens(c) - stub.tokens
  }
  return saved
}

function nativeStep(step: Step, elided: boolean, framed: boolean): Rendered {
  if (step.kind === 'format_error') {
    return said(step.text ?? '', step.formatError ?? '[FormatError]')
  }
  if (step.kind === 'finish') return said(step.answer ?? '')
  let tokens = FRAMING + approxTokens(step.thought)
  const toolCalls: NativeToolCall[] = []
  const { calls } = step
  for (let k = 0; k < calls.length; k++) {
    const c = calls[k]!
    const args = c.rawArgs ?? JSON.stringify(c.args)
    toolCalls.push({ id: c.id, type: 'function', function: { name: c.name, arguments: args } })
    tokens += approxTokens(args) + approxTokens(c.name) + FRAMING
  }
  const messages: ChatMessage[] = [
    { role: 'assistant', content: step.thought || null, tool_calls: toolCalls },
  ]
  for (let k = 0; k < calls.length; k++) {
    const c = calls[k]!
    const stub = elided ? elidedObservation(c) : null
    const observation = stub?.text ?? c.observation ?? ''
    // One lookup of the frame for its text and its tokens.
    const frame = framed ? frameOf(c.name) : null
    const content = frame ? frame.open + framedText(observation) + FRAME_CLOSE : observation
    messages.push({ role: 'tool', tool_call_id: c.id, content })
    tokens += FRAMING + (frame ? frame.tokens : 0) + (stub?.tokens ?? observationTokens(c))
  }
  return { messages, tokens }
}

function textStep(step: Step, elided: boolean, framed: boolean): Rendered {
  const text = step.text ?? step.thought
  if (step.kind === 'format_error') return said(text, step.formatError ?? '[FormatError]')
  if (step.kind === 'finish') return said(text)
  const several = step.calls.length > 1
  const pieces: string[] = []
  let content = ''
  for (const c of step.calls) {
    if (pieces.length) pieces.push('\n\n')
    const observation = (elided ? elidedObservation(c)?.text : null) ?? c.observation ?? ''
    if (framed) pieces.push(frameOpen(c.name), framedText(observation), FRAME_CLOSE)
    else pieces.push(several ? `Observation (${c.name}):\n` : 'Observation:\n', observation)
  }
  // Concatenated, not joined: V8 keeps a concatenation as a rope until something reads it, so
  // the observations are copied once, when the request is serialized.
  for (const piece of pieces) content += piece
  // Counted whole (summing rounded counts of pieces would drift), without reading the rope.
  const tokens = 2 * FRAMING + approxTokens(text) + approxTokensJoined(pieces)
  return {
    messages: [
      { role: 'assistant', content: text },
      { role: 'user', content },
    ],
    tokens,
  }
}

/** An assistant message, and the user's answer to it (a format error) when there is one. */
function said(text: string, reply?: string): Rendered {
  const messages: ChatMessage[] = [{ role: 'assistant', content: text }]
  let tokens = FRAMING + approxTokens(text)
  if (reply !== undefined) {
    messages.push({ role: 'user', content: reply })
    tokens += FRAMING + approxTokens(reply)
  }
  return { messages, tokens }
}

// Role and framing tokens per message (and per native tool call).
export const FRAMING = 4

/** Counted once when the call finished (native tool messages are the observation itself). */
export function observationTokens(c: Call): number {
  return c.tokens ?? approxTokens(c.observation ?? '')
}

export function messageTokens(m: ChatMessage): number {
  let n = FRAMING
  if (m.content) n += approxTokens(m.content)
  return n
}
