import { env, exports } from 'cloudflare:workers'
import { runInDurableObject } from 'cloudflare:test'
import { expect, it } from 'vitest'

it('healthz', async () => {
  const res = await exports.default.fetch('https://x/healthz')
  expect(res.status).toBe(200)
  const stub = (env as any).RUNS.getByName('a')
  expect(await stub.ping()).toBe('pong')
  await runInDurableObject(stub, async (_i, state) => {
    state.storage.sql.exec('create table if not exists t(x)')
  })
})
