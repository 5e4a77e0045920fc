/**
 * A second Worker for the console's browser tests (console.test.ts), in workerd under Miniflare
 * (worker-runtime.ts), its whole outside world fakes in this process (fake-network.ts):
 *
 * - the model: the OpenAI-compatible fake, streamed; `holdNextAnswer()` passes the next answer's
 *   SSE frames only as the test lets them through;
 * - `tracker`, an MCP server (the SDK's, test/fakes/fake-mcp.ts) that each person connects with
 *   OAuth, behind the authorization server fake of test/mcp-oauth/ (test/fakes/fake-oauth.ts);
 *   a browser reaches that server through `routeAuthServer()`;
 * - agents: the shipped ones and console-agents.ts's, bundled in place of agents/index.ts;
 * - `crash()`: SIGKILLs workerd and starts a new one on the same storage and port, as a crash
 *   and a restart would; the page reconnects as it would to a restarted service. `kill()` leaves
 *   it down until the test starts it again (an outage).
 *
 * It listens on a fixed 127.0.0.1 port chosen free at start, and PUBLIC_URL is that origin, so
 * a connect link's callback comes back to this Worker in the browser that followed it.
 */
import { createServer } from 'node:net'
import type { BrowserContext, Route } from 'playwright-core'
import { FAKE_OPENAI_HOST, FakeOpenAI } from '../fakes/fake-openai'
import { FAKE_AS_ORIGIN, FakeAuthServer, protectedMcp } from '../fakes/fake-oauth'
import type { FakeMcp } from '../fakes/fake-mcp'
import { FakeNetwork } from './fake-network'
import { bundleWorker, tempStorage, WorkerRuntime } from './worker-runtime'

const MODEL_KEY = 'sk-console-fake-openai-0123456789'
const TRACKER_HOST = 'tracker.test'
// The shipped agents and the test's (console-agents.ts), one with a name as long as may be.
const AGENTS = { '../../agents/index': './test/node/console-agents.ts' }

/** Lets a held model answer's SSE frames through, as many as the test opens. */
export interface HeldAnswer {
  /** Resolves when the Worker has asked the model (the answer is held from then). */
  arrived: Promise<void>
  /** Lets `frames` more frames through (all the rest without an argument). */
  pass(frames?: number): void
}

export interface ConsoleWorker {
  /** `http://127.0.0.1:<port>`, also its PUBLIC_URL. */
  baseUrl: string
  model: FakeOpenAI
  auth: FakeAuthServer
  tracker: FakeMcp
  network: FakeNetwork
  /** The next model answer is held: nothing of it goes back until `pass()`. */
  holdNextAnswer(): HeldAnswer
  /** Answers the browser's requests to the authorization server with the fake; undo it after. */
  routeAuthServer(context: BrowserContext): Promise<() => Promise<void>>
  /** SIGKILL, then a new runtime on the same storage and port, serving once this resolves. */
  crash(): Promise<void>
  /** SIGKILL now; the function returned starts the new runtime, as `crash()` does at once. */
  kill(): Promise<() => Promise<void>>
  stop(): Promise<void>
}

/** Starts the Worker with `bindings` (API tokens and the like) beside its own. */
export async function startConsoleWorker(bindings: Record<string, string>): Promise<ConsoleWorker> {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const model = new FakeOpenAI({ apiKey: MODEL_KEY })
  const auth = new FakeAuthServer()
  const tracker = protectedMcp(auth, TRACKER_HOST)
  const holds: Valve[] = []
  const network = new FakeNetwork()
    .on(FAKE_OPENAI_HOST, async (req) => {
      const valve = holds.shift()
      if (!valve) return model.handler(req)
      valve.arrive()
      const res = await model.handler(req)
      return res.body ? new Response(valve.meter(res.body), res) : res
    })
    .on(new URL(FAKE_AS_ORIGIN).host, auth.handler)
    .on(TRACKER_HOST, tracker.handler)
  const storage = await tempStorage()
  const settings = {
    WEBHOOK_SECRET: 'console-webhook-secret',
    OPENAI_API_KEY: MODEL_KEY,
    OPENAI_BASE_URL: `https://${FAKE_OPENAI_HOST}/v1`,
    MODEL: 'gpt-fake',
    MODEL_PROTOCOL: 'native',
    MODEL_STREAM: 'on',
    MODEL_MAX_RETRIES: '0',
    CONFIRM_POLICY: 'ask',
    ENABLED_TOOLS: '',
    CPU_MS: '30000',
    PUBLIC_URL: baseUrl,
    MCP_TOKEN_KEY: 'ZWRnZWxvb3AtdGVzdC1tY3AtdG9rZW4ta2V5LTAwMDE=',
    MCP_SERVERS: JSON.stringify([
      {
        name: 'tracker',
        url: `https://${TRACKER_HOST}/mcp`,
        auth: 'oauth',
        owner: 'person',
        timeout_ms: 5_000,
      },
    ]),
    ...bindings,
  }
  let generation = 0
  const start = async () => {
    const mine = ++generation
    return WorkerRuntime.start({
      worker: await bundleWorker(AGENTS),
      storage: storage.path,
      bindings: settings,
      port,
      outbound: network.handlerFor(mine, () => mine === generation && !runtime.dead),
    })
  }
  let runtime: WorkerRuntime = await start()
  const kill = async () => {
    await runtime.kill()
    return async () => {
      runtime = await start()
    }
  }
  return {
    baseUrl,
    model,
    auth,
    tracker: tracker.mcp,
    network,
    holdNextAnswer() {
      const valve = new Valve()
      holds.push(valve)
      return valve
    },
    async routeAuthServer(context) {
      const pattern = `${FAKE_AS_ORIGIN}/**`
      const answer = async (route: Route) => {
        const request = route.request()
        const body = request.postDataBuffer()
        const res = await auth.handler(
          new Request(request.url(), {
            method: request.method(),
            headers: request.headers(),
            ...(body ? { body } : {}),
          }),
        )
        await route.fulfill({
          status: res.status,
          headers: Object.fromEntries(res.headers),
          body: Buffer.from(await res.arrayBuffer()),
        })
      }
      await context.route(pattern, answer)
      return () => context.unroute(pattern, answer)
    },
    async crash() {
      await (
        await kill()
      )()
    },
    kill,
    async stop() {
      await runtime.stop()
      await storage.remove()
    },
  }
}

/** A held answer's body: frames (`\n\n`-ended) go through only as far as `pass()` allows. */
class Valve implements HeldAnswer {
  readonly arrived: Promise<void>
  arrive!: () => void
  #allowed = 0
  #wake: (() => void) | undefined

  constructor() {
    this.arrived = new Promise((resolve) => (this.arrive = resolve))
  }

  pass(frames = Infinity): void {
    this.#allowed += frames
    this.#wake?.()
  }

  meter(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const reader = body.getReader()
    const decoder = new TextDecoder()
    let text = ''
    const sent = () => text.split('\n\n').length - 1
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        while (sent() >= this.#allowed) {
          await new Promise<void>((resolve) => (this.#wake = resolve))
        }
        const { done, value } = await reader.read()
        if (done) return controller.close()
        text += decoder.decode(value, { stream: true })
        controller.enqueue(value)
      },
      cancel: (reason) => reader.cancel(reason),
    })
  }
}

/** A port nothing listens on now (the runtime keeps it across a restart). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
