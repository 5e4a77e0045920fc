import { runInDurableObject } from 'cloudflare:test'
import { expect, it } from 'vitest'
import { postJson, stubOf, useServiceFakes } from './harness'

useServiceFakes()

it('a retried start (same Idempotency-Key) re-arms an alarm that was lost', async () => {
  const first = await postJson('/v1/runs', { task: 'Add 2 and 3.' }, { 'Idempotency-Key': 'k-1' })
  expect(first.status).toBe(202)
  const { id } = (await first.json()) as { id: string }
  // As if the first setAlarm never landed.
  await runInDurableObject(stubOf(id), (_i, state) => state.storage.deleteAlarm())
  expect(await runInDurableObject(stubOf(id), (_i, state) => state.storage.getAlarm())).toBeNull()

  const again = await postJson('/v1/runs', { task: 'Add 2 and 3.' }, { 'Idempotency-Key': 'k-1' })
  expect(again.status).toBe(200)
  expect(
    await runInDurableObject(stubOf(id), (_i, state) => state.storage.getAlarm()),
  ).not.toBeNull()
})
