// The floor's model call through the `openai` client, one client per isolate as edgeloop keeps
// it. The variant with plain `fetch` (model-fetch.ts) is bundled in its place by build.mjs.
import OpenAI from 'openai'
import type {
  ChatCompletionMessage,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions'
import { TOOLS } from './http-get'

/** What a model call reads of the Worker's settings. */
export interface ModelEnv {
  OPENAI_API_KEY: string
  OPENAI_BASE_URL: string
  MODEL: string
}

let client: OpenAI | undefined

/** One chat completion with the tool, no retries (the bench's model never fails). */
export async function complete(
  env: ModelEnv,
  messages: ChatCompletionMessageParam[],
): Promise<ChatCompletionMessage> {
  client ??= new OpenAI({ apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL })
  const completion = await client.chat.completions.create(
    { model: env.MODEL, messages, tools: TOOLS },
    { maxRetries: 0 },
  )
  return completion.choices[0]!.message
}
