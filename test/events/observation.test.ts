/** `GET /v1/runs/:id/observations/:handle`: a truncated call's whole output (the console's "read more"). */
import { expect, it } from 'vitest'
import { EdgeloopClient } from '../../src/client'
import { exports } from 'cloudflare:workers'
import { reply } from '../fakes/fake-openai'
import {
  api,
  API_TOKEN,
  AUTH,
  drainAlarms,
  getTrace,
  ORIGIN,
  startRun,
  useServiceFakes,
} from '../service/harness'
import { readSse } from './sse'

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

it('serves the stored output the trace and the events point to, and 404s an unknown handle', async () => {
  fakes.ai.enqueue(
    reply.toolCalls([
      { id: 'call_get', name: 'http_get', arguments: { url: 'https://api.allowed.test/page' } },
    ]),
    reply.text('Read.'),
  )
  const id = await startRun({
    task: 'Read the page.',
    tools: ['http_get'],
    budget: { maxObservationTokens: 1200 },
  })
  await drainAlarms(id)
  const call = (await getTrace(id)).steps[0]!.calls[0]!
  expect(call).toMatchObject({ truncated: true, handle: 'obs_call_get' })

  const events = await readSse(await api(`/v1/runs/${id}/events`, { headers: AUTH })).toEnd()
  const finished = events.find((e) => e.type === 'call_finished')!
  expect(finished.data).toMatchObject({
    truncated: true,
    handle: 'obs_call_get',
    originalSize: call.originalSize,
  })

  const res = await api(`/v1/runs/${id}/observations/obs_call_get`, { headers: AUTH })
  expect(res.status).toBe(200)
  const body = (await res.json()) as { handle: string; text: string }
  expect(body.handle).toBe('obs_call_get')
  expect(body.text).toContain(PAGE)
  const client = new EdgeloopClient({
    baseUrl: ORIGIN,
    token: API_TOKEN,
    fetch: (r) => exports.default.fetch(r),
  })
  expect((await client.readObservation(id, 'obs_call_get')).text).toBe(body.text)

  const missing = await api(`/v1/runs/${id}/observations/obs_nope`, { headers: AUTH })
  expect(missing.status).toBe(404)
  expect(((await missing.json()) as { error: { code: string } }).error.code).toBe(
    'observation_not_found',
  )
  const noRun = await api(`/v1/runs/run_${'0'.repeat(32)}/observations/obs_call_get`, {
    headers: AUTH,
  })
  expect(noRun.status).toBe(404)
  expect(((await noRun.json()) as { error: { code: string } }).error.code).toBe('run_not_found')
  expect((await api(`/v1/runs/${id}/observations/obs_call_get`)).status).toBe(401)
})
