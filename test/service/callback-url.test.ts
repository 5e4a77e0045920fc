/**
 * `callback_url` never points inside the network unless allowlisted, and
 * CALLBACK_ALLOWLIST matches host and port like HTTP_ALLOWLIST, http only when written so.
 */
import { describe, expect, it } from 'vitest'
import { JSON_AUTH, postJson, useServiceFakes } from './harness'
import { fetchWith } from './worker-with'

useServiceFakes()

const start = (callback_url: string) => postJson('/v1/runs', { task: 'x', callback_url })

describe('callback_url refuses internal addresses (400 naming the rule)', () => {
  it.each([
    ['https://127.0.0.1/cb', 'loopback'],
    ['https://127.8.9.10:8443/cb', 'loopback'],
    ['https://[::1]/cb', 'loopback'],
    ['https://[0:0:0:0:0:0:0:1]/cb', 'loopback'],
    ['https://169.254.169.254/latest/meta-data/', 'metadata'],
    ['https://169.254.10.1/', 'link_local'],
    ['https://[fe80::1]/', 'link_local'],
    ['https://10.1.2.3/', 'private'],
    ['https://172.16.0.1/', 'private'],
    ['https://192.168.1.1/', 'private'],
    ['https://100.64.0.1/', 'private'],
    ['https://[fd00:ec2::254]/', 'private'],
    ['https://0.0.0.0/', 'unspecified'],
    ['https://[::]/', 'unspecified'],
    ['https://224.0.0.1/', 'multicast'],
    ['https://2130706433/', 'numeric_encoding'],
    ['https://0x7f.1/', 'numeric_encoding'],
    ['https://0177.0.0.1/', 'numeric_encoding'],
    ['https://127.1/', 'numeric_encoding'],
    ['https://0x08080808/', 'numeric_encoding'],
    ['https://[::ffff:127.0.0.1]/', 'loopback'],
    ['https://[::ffff:a9fe:a9fe]/', 'metadata'],
    ['https://[::ffff:8.8.8.8]/', 'ipv4_mapped'],
    ['https://[64:ff9b::10.0.0.1]/', 'private'],
    ['https://localhost/', 'local_name'],
    ['https://localhost./', 'local_name'],
    ['https://api.localhost/', 'local_name'],
    ['https://metadata.google.internal/computeMetadata/v1/', 'local_name'],
    ['https://printer.local/', 'local_name'],
    ['https://intranet/', 'local_name'],
  ])('%s → %s', async (url, rule) => {
    const res = await start(url)
    expect(res.status).toBe(400)
    const json = (await res.json()) as {
      error: { code: string; message: string; details: unknown }
    }
    expect(json.error).toMatchObject({ code: 'invalid_callback_url', details: { rule } })
    expect(json.error.message).toContain(`rule ${rule}`)
    expect(json.error.message).toContain('CALLBACK_ALLOWLIST')
  })

  it.each(['https://receiver.test/cb', 'https://93.184.215.14/hook', 'https://[2606:4700::1111]/'])(
    'a public host is accepted: %s',
    async (url) => {
      expect((await start(url)).status).toBe(202)
    },
  )
})

describe('CALLBACK_ALLOWLIST', () => {
  const LIST = '127.0.0.1:8443,http://localhost:8787,*.corp.test'
  const startWith = (url: string, list = LIST) =>
    fetchWith({ CALLBACK_ALLOWLIST: list }, '/v1/runs', {
      method: 'POST',
      headers: JSON_AUTH,
      body: JSON.stringify({ task: 'x', callback_url: url }),
    })

  it.each([
    ['https://127.0.0.1:8443/cb', 202],
    ['https://2130706433:8443/cb', 202],
    ['https://127.0.0.1/cb', 400],
    ['https://127.0.0.1:9000/cb', 400],
    ['http://127.0.0.1:8443/cb', 400],
    ['http://localhost:8787/cb', 202],
    ['https://localhost:8787/cb', 202],
    ['http://localhost:8788/cb', 400],
    ['https://hooks.corp.test/cb', 202],
    ['http://hooks.corp.test/cb', 400],
    ['https://hooks.corp.test:444/cb', 400],
    ['https://receiver.test/cb', 400],
  ])('%s → %i', async (url, status) => {
    const res = await startWith(url)
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(status)
    if (status === 400) {
      expect(await res.json()).toMatchObject({ error: { code: 'invalid_callback_url' } })
    }
  })

  it.each(['https://hooks.test/cb', 'hooks.test/path', '*.test:8443', 'ftp://hooks.test'])(
    'a bad entry %s is a 503 naming CALLBACK_ALLOWLIST',
    async (entry) => {
      const res = await startWith('https://receiver.test/cb', `receiver.test,${entry}`)
      expect(res.status).toBe(503)
      const json = (await res.json()) as { error: { code: string; message: string } }
      expect(json.error.code).toBe('misconfigured')
      expect(json.error.message).toContain('CALLBACK_ALLOWLIST')
    },
  )
})
