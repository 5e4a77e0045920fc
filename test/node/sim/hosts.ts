/**
 * The hosts on the simulated network besides the MCP server: the model provider (a strict OpenAI
 * fake, test/fakes/fake-openai.ts, answering by the run and the step asked, so a call made again
 * after a crash gets the same reply; or failing, or hanging) and the receiver of `http_get`,
 * `http_post` and the callbacks.
 */
import { FakeOpenAI, type FakeReply } from '../../fakes/fake-openai'
import type { ViolationKind } from './invariants'
import type { Handler } from './network'
import { PROVIDER_KEY } from './scenarios'
import type { Sim } from './sim'

export interface ModelAsk {
  tag: string
  step: number
  from: string
}

export class SimProvider {
  /** Broken provider (self-check): it bills a second completion for one request, once. */
  answersTwice = false

  constructor(
    private readonly sim: Sim,
    private readonly scripts: Map<string, FakeReply[]>,
    private readonly asks: ModelAsk[],
    private readonly fail: (kind: ViolationKind, detail: string) => void,
  ) {}

  readonly handler: Handler = async (req) => {
    const body = await req.clone().text()
    let messages: { role?: string; content?: unknown }[] = []
    try {
      messages = (JSON.parse(body) as { messages?: typeof messages }).messages ?? []
    } catch {
      // not JSON: FakeOpenAI refuses it
    }
    const task = String(
      messages.find((m) => m.role === 'user' && String(m.content).startsWith('Task: ['))?.content ??
        '',
    )
    const tag = /^Task: \[([^\]]+)\]/.exec(task)?.[1] ?? '?'
    // A follow-up's history is one user message: the assistant turns are this run's steps.
    const step = messages.filter((m) => m.role === 'assistant').length
    this.asks.push({ tag, step, from: 'provider' })
    const api = new FakeOpenAI({ apiKey: PROVIDER_KEY })
    const fault = this.sim.fault('provider', `model answer for ${tag} step ${step}`, 4, 0.04)
    const next = this.scripts.get(tag)?.[step]
    if (fault === 1)
      api.enqueue({ kind: 'error', status: 500, message: 'The server had an error', headers: {} })
    else if (fault === 2) {
      const headers = { 'retry-after': '1' }
      api.enqueue({ kind: 'error', status: 429, message: 'Rate limit reached', headers })
    } else if (fault === 3) api.enqueue({ kind: 'hang' })
    else if (next) api.enqueue(next)
    else
      this.fail(
        'lost_step',
        `the model was asked for step ${step} of ${tag}, which its script does not have`,
      )
    if (this.answersTwice && next) {
      this.answersTwice = false
      this.asks.push({ tag, step, from: 'provider (answered twice)' })
      this.sim.log('  BROKEN provider answers this request twice')
    }
    return api.handler(req)
  }
}

/** The receiver: http_get's status pages (or a failure, or a hang), http_post's effects, callbacks. */
export function receiver(sim: Sim): Handler {
  return async (req) => {
    const url = new URL(req.url)
    if (req.method === 'GET' && url.pathname.startsWith('/status/')) {
      const fault = sim.fault('tool', `http_get ${url.pathname}`, 3, 0.05)
      if (fault === 1) return new Response('upstream down', { status: 503 })
      if (fault === 2) return new Promise<Response>(() => {})
      return new Response('status: green', { headers: { 'content-type': 'text/plain' } })
    }
    if (req.method === 'POST' && url.pathname === '/effect') {
      return Response.json({ recorded: true }, { status: 201 })
    }
    if (req.method === 'POST' && url.pathname === '/callback')
      return new Response(null, { status: 204 })
    return new Response('not found', { status: 404 })
  }
}
