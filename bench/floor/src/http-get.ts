import type { ChatCompletionTool } from 'openai/resources/chat/completions'

/** The floor's one tool as the model is told of it. */
export const TOOLS: ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'http_get',
      description: 'Fetch a web page with a read-only GET request.',
      parameters: {
        type: 'object',
        properties: { url: { type: 'string', description: 'Absolute URL on an allowed host' } },
        required: ['url'],
        additionalProperties: false,
      },
    },
  },
]

/** The tool: a GET of an allowed host, answered as its status line, a blank line, the text. */
export async function httpGet(allowlist: string[], args: string): Promise<string> {
  try {
    const target = new URL((JSON.parse(args) as { url: string }).url)
    if (!allowlist.includes(target.host)) return `[ToolError] ${target.host} is not allowed`
    const res = await fetch(target, { headers: { accept: 'text/plain, */*;q=0.1' } })
    const type = res.headers.get('content-type') ?? 'unknown'
    return `HTTP ${res.status} ${res.statusText} (${type})\n\n${await res.text()}`
  } catch (err) {
    return `[ToolError] ${(err as Error).message}`
  }
}
