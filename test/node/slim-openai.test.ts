/**
 * The `openai` package as the Worker ships it (scripts/slim-openai.mjs, docs/development.md#the-build):
 * the unused API resources and helpers are stand-ins, the chat-completions path is the package's
 * own code. Checked on the built module (the exports, the client, streamed and whole replies,
 * retries, error classes, a stand-in's error) and on the deployable bundle (a run whose model
 * streams through the fake, with a retried 500 first, finishes with its answer).
 */
import { readFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildSlimOpenAI } from '../../scripts/slim-openai.mjs'
import { FAKE_OPENAI_BASE_URL, FAKE_OPENAI_KEY, FakeOpenAI, reply } from '../fakes/fake-openai'
import { bundleWorker, tempStorage, WorkerRuntime } from './worker-runtime'

type OpenAIModule = typeof import('openai')

let slim: OpenAIModule
let real: OpenAIModule

beforeAll(async () => {
  slim = (await import(await buildSlimOpenAI())) as OpenAIModule
  real = await import('openai')
})

/** A slim client whose `fetch` is the fake, called in process. */
function clientOf(api: FakeOpenAI, maxRetries = 0) {
  return new slim.default({
    apiKey: FAKE_OPENAI_KEY,
    baseURL: FAKE_OPENAI_BASE_URL,
    maxRetries,
    fetch: (url, init) => Promise.resolve(api.handler(new Request(url as string, init))),
  })
}

describe('the slim openai module', () => {
  it('exports every name the package exports', () => {
    expect(Object.keys(slim).sort()).toEqual(Object.keys(real).sort())
    expect(Object.keys(slim.default).sort()).toEqual(Object.keys(real.default).sort())
  })

  it('answers chat.completions.create whole, with the real client', async () => {
    const api = new FakeOpenAI().enqueue(reply.text('forty-two'))
    const completion = await clientOf(api).chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'the answer?' }],
    })
    expect(completion.choices[0]?.message.content).toBe('forty-two')
    expect(api.untakenViolations()).toEqual([])
  })

  it('streams chat.completions.create, after retrying a 500', async () => {
    const api = new FakeOpenAI().enqueue(
      reply.error(500, 'overloaded', { 'retry-after-ms': '1' }),
      reply.text('streamed answer'),
    )
    const stream = await clientOf(api, 1).chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'the answer?' }],
      stream: true,
    })
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? ''
    expect(text).toBe('streamed answer')
    expect(api.bodies).toHaveLength(2)
    expect(api.bodies[1]).toMatchObject({ stream: true })
  })

  it("throws the package's error classes", async () => {
    const api = new FakeOpenAI().enqueue(reply.error(400, 'bad tools'))
    const failed = await clientOf(api)
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] })
      .catch((err: unknown) => err)
    expect(failed).toBeInstanceOf(slim.APIError)
    expect(failed).toBeInstanceOf(slim.BadRequestError)
    expect((failed as InstanceType<typeof slim.APIError>).status).toBe(400)
  })

  it('names what is left out when a stand-in is used', () => {
    const client = clientOf(new FakeOpenAI())
    expect(() => client.files.list()).toThrow(
      /openai: Files\.list is left out of edgeloop's bundle/,
    )
    expect(() => client.chat.completions.stream({ model: 'm', messages: [] })).toThrow(
      /openai: ChatCompletionStream\.createChatCompletion is left out/,
    )
  })
})

describe('the deployable bundle', () => {
  const storage: { path: string; remove: () => Promise<void> }[] = []
  afterAll(async () => {
    for (const s of storage) await s.remove()
  })

  it('carries the stand-ins, and a run streams its model replies through the real client', async () => {
    const worker = await bundleWorker()
    const script = await readFile(worker.scriptPath, 'utf8')
    expect(script).toContain("is left out of edgeloop's bundle")
    expect(script).not.toContain('AssistantStream')

    const api = new FakeOpenAI().enqueue(
      reply.error(500, 'overloaded', { 'retry-after-ms': '1' }),
      reply.toolCalls([{ name: 'calculator', arguments: { expression: '6*7' } }]),
      reply.text('The answer is 42.'),
    )
    const dir = await tempStorage()
    storage.push(dir)
    const rt = await WorkerRuntime.start({
      worker,
      storage: dir.path,
      bindings: {
        API_TOKEN: 'slim-openai-token',
        WEBHOOK_SECRET: 'slim-openai-webhook-secret',
        OPENAI_API_KEY: FAKE_OPENAI_KEY,
        OPENAI_BASE_URL: FAKE_OPENAI_BASE_URL,
        MODEL: 'gpt-test',
        MODEL_PROTOCOL: 'native',
        MODEL_STREAM: 'on',
        MODEL_MAX_RETRIES: '1',
        CONFIRM_POLICY: 'allow',
        ENABLED_TOOLS: 'calculator',
        CPU_MS: '30000',
      },
      outbound: async (req) =>
        new URL(req.url).host === 'api.openai.test'
          ? api.handler(req)
          : new Response('no such host', { status: 502 }),
    })
    try {
      const auth = { authorization: 'Bearer slim-openai-token' }
      const started = await rt.fetch('/v1/runs', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ task: 'What is 6*7?' }),
      })
      expect(started.status).toBe(202)
      const { id } = (await started.json()) as { id: string }
      let view: { status: string; result?: { ok: boolean; answer: string } } = { status: 'running' }
      for (let i = 0; i < 200 && !['succeeded', 'failed'].includes(view.status); i++) {
        await new Promise((r) => setTimeout(r, 50))
        view = (await (await rt.fetch(`/v1/runs/${id}`, { headers: auth })).json()) as typeof view
      }
      expect(view).toMatchObject({
        status: 'succeeded',
        result: { ok: true, answer: 'The answer is 42.' },
      })
      expect(api.bodies).toHaveLength(3)
      expect(api.bodies.every((b) => b.stream === true)).toBe(true)
      expect(api.untakenViolations()).toEqual([])
    } finally {
      await rt.stop()
    }
  })
})
