import { DurableObject } from 'cloudflare:workers'

export class RunStore extends DurableObject<Env> {
  async ping(): Promise<string> {
    return 'pong'
  }
}

export interface Env {
  RUNS: DurableObjectNamespace<RunStore>
}

export default {
  async fetch(req: Request): Promise<Response> {
    if (new URL(req.url).pathname === '/healthz') return Response.json({ ok: true })
    return new Response('not found', { status: 404 })
  },
} satisfies ExportedHandler<Env>
