import type { Message, SendMessageRequest } from '@a2a-js/sdk'
import { ContentTypeNotSupportedError, RequestMalformedError } from '@a2a-js/sdk/errors'

/** What a message asks for: its text (the task, or a question's answer) and the skill it names. */
export interface MessageInput {
  message: Message
  /** The text parts, one per line, then each data part as JSON. */
  text: string
  /** The data parts' values, in order. */
  data: unknown[]
  /** The agent: `metadata.skill` or `metadata.agent` of the message (or of the request). */
  skill: string | undefined
}

/**
 * Reads a SendMessage request: a message with at least one text or data part. File parts (raw
 * bytes or a URL) are refused: an agent's task is text, and nothing here fetches or stores files.
 */
export function messageInput(request: SendMessageRequest): MessageInput {
  const message = request.message
  if (!message || !message.parts.length) {
    throw new RequestMalformedError(
      'params.message needs at least one part (a text part: the task)',
    )
  }
  if (!message.messageId) {
    throw new RequestMalformedError(
      'params.message.messageId is required (a unique id per message)',
    )
  }
  const texts: string[] = []
  const data: unknown[] = []
  for (const [i, part] of message.parts.entries()) {
    const content = part.content
    if (content?.$case === 'text') texts.push(content.value)
    else if (content?.$case === 'data') data.push(content.value)
    else {
      throw new ContentTypeNotSupportedError(
        `params.message.parts[${i}] is ${content ? `a ${content.$case} part` : 'empty'}; send the task as text parts (and structured input as data parts)`,
      )
    }
  }
  const text = [...texts, ...data.map((d) => JSON.stringify(d))].join('\n')
  if (!text.trim()) throw new RequestMalformedError('params.message has no text: send the task')
  return { message, text, data, skill: skillOf(message.metadata) ?? skillOf(request.metadata) }
}

function skillOf(metadata: Record<string, unknown> | undefined): string | undefined {
  const named = metadata?.skill ?? metadata?.agent
  if (named === undefined) return undefined
  if (typeof named !== 'string' || !named) {
    throw new RequestMalformedError(
      'metadata.skill (or metadata.agent) must be the name of a skill from the agent card',
    )
  }
  return named
}
