import { exports } from 'cloudflare:workers'
import { expect, it } from 'vitest'

it('answers /healthz without any configuration', async () => {
  const res = await exports.default.fetch('https://edgeloop.test/healthz')
  expect(res.status).toBe(200)
  expect(await res.json()).toEqual({ ok: true, service: 'edgeloop' })
})
