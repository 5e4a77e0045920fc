// The peer of `npm run bench -- peer` (bench/peer-cost.mjs): the same two-call task as edgeloop's,
// written the way Cloudflare's Agents SDK documents it. One `Agent` (a Durable Object) per run
// runs the AI SDK's `generateText` against an OpenAI-compatible model with one tool, `http_get`,
// and keeps the run's messages in its SQLite with `this.sql`, a row per message as each step
// ends (docs: agents/docs/agent-class.md#thissql). `POST /runs {task}` answers when the run is
// done. Dev only: it is never part of edgeloop's Worker.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { Agent, getAgentByName } from 'agents'
import { generateText, isStepCount, tool } from 'ai'
import { z } from 'zod'

interface Env {
  RunAgent: DurableObjectNamespace<RunAgent>
  OPENAI_BASE_URL: string
  OPENAI_API_KEY: string
  MODEL: string
  HTTP_ALLOWLIST: string
}

/** The tool's answer in edgeloop's shape: the status line, a blank line, the body as text. */
async function httpGet(url: string, allowed: string): Promise<string> {
  const target = new URL(url)
  if (target.host !== allowed) throw new Error(`${target.host} is not on the allowlist`)
  const res = await fetch(target, { headers: { accept: 'text/plain, */*;q=0.1' } })
  const type = res.headers.get('content-type') ?? 'unknown'
  return `HTTP ${res.status} ${res.statusText} (${type})\n\n${await res.text()}`
}

export class RunAgent extends Agent<Env> {
  onStart() {
    this.sql`CREATE TABLE IF NOT EXISTS messages (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      role TEXT NOT NULL,
      content TEXT NOT NULL
    )`
  }

  /** Runs `task` to its answer; each step's messages are stored as the step ends. */
  async run(task: string): Promise<{ ok: boolean; text: string; steps: number }> {
    this.sql`INSERT INTO messages (role, content) VALUES ('user', ${task})`
    const provider = createOpenAICompatible({
      name: 'bench',
      baseURL: this.env.OPENAI_BASE_URL,
      apiKey: this.env.OPENAI_API_KEY,
    })
    const result = await generateText({
      model: provider.chatModel(this.env.MODEL),
      prompt: task,
      maxRetries: 0,
      stopWhen: isStepCount(5),
      tools: {
        http_get: tool({
          description: 'Fetch a web page with a read-only GET request.',
          inputSchema: z.object({ url: z.string().describe('Absolute URL on an allowed host') }),
          execute: ({ url }) => httpGet(url, this.env.HTTP_ALLOWLIST),
        }),
      },
      onStepEnd: (step) => {
        const assistant = { text: step.text, toolCalls: step.toolCalls }
        this
          .sql`INSERT INTO messages (role, content) VALUES ('assistant', ${JSON.stringify(assistant)})`
        for (const r of step.toolResults) {
          this.sql`INSERT INTO messages (role, content) VALUES ('tool', ${JSON.stringify(r)})`
        }
      },
    })
    return { ok: result.finishReason === 'stop', text: result.text, steps: result.steps.length }
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url)
    if (url.pathname === '/healthz') return new Response('ok')
    if (url.pathname !== '/runs' || request.method !== 'POST') {
      return Response.json({ error: { code: 'not_found', message: url.pathname } }, { status: 404 })
    }
    const { task } = (await request.json()) as { task: string }
    const agent = await getAgentByName(env.RunAgent, crypto.randomUUID())
    return Response.json(await agent.run(task))
  },
} satisfies ExportedHandler<Env>
