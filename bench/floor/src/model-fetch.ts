// The floor's model call with plain `fetch`, no client: the variant that prices the `openai`
// client's first use (bundled in place of model.ts by build.mjs).
import type {
  ChatCompletion,
  ChatCompletionMessage,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions'
import { TOOLS } from './http-get'
import type { ModelEnv } from './model'

/** One chat completion with the tool, as the chat completions API defines it. */
export async function complete(
  env: ModelEnv,
  messages: ChatCompletionMessageParam[],
): Promise<ChatCompletionMessage> {
  const res = await fetch(`${env.OPENAI_BASE_URL}/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${env.OPENAI_API_KEY}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ model: env.MODEL, messages, tools: TOOLS }),
  })
  if (!res.ok) throw new Error(`the model answered HTTP ${res.status}`)
  const completion = (await res.json()) as ChatCompletion
  return completion.choices[0]!.message
}
