import { runInDurableObject } from 'cloudflare:test'
import { expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { drainAlarms, getTrace, startRun, stubOf, useServiceFakes } from './harness'

// A page much longer than the run's observation limit, with a marker every 100 characters so a
// missing or repeated slice would show.
const PAGE = Array.from(
  { length: 120 },
  (_, i) => `line ${String(i).padStart(4, '0')} `.padEnd(99, '.') + '\n',
).join('')

const fakes = useServiceFakes({
  receiver: false,
  hosts: () => ({
    'api.allowed.test': () => new Response(PAGE, { headers: { 'content-type': 'text/plain' } }),
  }),
})

it('keeps a truncated observation whole in the Durable Object and serves it in slices', async () => {
  const slices = [0, 4000, 8000, 12_000]
  fakes.ai.enqueue(
    reply.toolCalls([
      { id: 'call_get', name: 'http_get', arguments: { url: 'https://api.allowed.test/page' } },
    ]),
    ...slices.map((offset, k) =>
      reply.toolCalls([
        {
          id: `call_read_${k}`,
          name: 'read_observation',
          arguments: { handle: 'obs_call_get', offset, length: 4000 },
        },
      ]),
    ),
    reply.text('I read the whole page.'),
  )
  const id = await startRun({
    task: 'Read the page.',
    tools: ['http_get'],
    budget: { maxObservationTokens: 1200, maxSteps: 10 },
  })
  await drainAlarms(id)

  const trace = await getTrace(id)
  expect(trace.ok).toBe(true)
  const first = trace.steps[0]!.calls[0]!
  expect(first.truncated).toBe(true)
  expect(first.handle).toBe('obs_call_get')
  expect(first.observation).toMatch(/…\[truncated about \d+ tokens\]…/)
  expect(first.observation).toContain('handle "obs_call_get"')

  // What the model was told it could read is all there: the slices rebuild the stored text.
  const stored = await runInDurableObject(stubOf(id), (_instance, state) =>
    state.storage.sql
      .exec<{ text: string }>('SELECT text FROM observation WHERE handle = ?', 'obs_call_get')
      .one(),
  )
  expect(stored.text).toContain(PAGE)
  const read = trace.steps.slice(1, 5).map((s) => {
    const obs = s.calls[0]!.observation
    expect(s.calls[0]!.truncated).toBe(false)
    return obs.slice(obs.indexOf(']\n') + 2, obs.lastIndexOf('\n['))
  })
  expect(read.join('')).toBe(stored.text)
  expect(trace.steps[4]!.calls[0]!.observation).toContain('[end of observation]')
})
