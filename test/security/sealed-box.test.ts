/**
 * src/security/sealed-box.ts: what seals MCP connections at rest (docs/mcp.md#where-tokens-live).
 * A value opens only for its own record and only with a key the box holds; a rotation keeps the
 * previous key's values readable.
 */
import { describe, expect, it } from 'vitest'
import { SealedBox } from '../../src/security/sealed-box'

const OLD = btoa('o'.repeat(32))
const NEW = btoa('n'.repeat(32))

describe('a sealed box', () => {
  it('opens what it sealed for the same record, and nothing of it is in the clear', async () => {
    const box = await SealedBox.fromKeys(NEW)
    const sealed = await box.seal('{"access_token":"at-secret-value"}', 'mcp_connections:wiki:x')
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/)
    expect(sealed).not.toContain('at-secret-value')
    expect(await box.open(sealed, 'mcp_connections:wiki:x')).toBe(
      '{"access_token":"at-secret-value"}',
    )
    // A fresh IV each time: the same value sealed twice differs.
    expect(await box.seal('same', 'r')).not.toBe(await box.seal('same', 'r'))
  })

  it('does not open for another record, with another key, or once altered', async () => {
    const box = await SealedBox.fromKeys(NEW)
    const sealed = await box.seal('token', 'mcp_connections:wiki:deployment')
    expect(await box.open(sealed, 'mcp_connections:wiki:token:alpha')).toBeNull()
    expect(
      await (await SealedBox.fromKeys(OLD)).open(sealed, 'mcp_connections:wiki:deployment'),
    ).toBeNull()
    const [v, id, iv, cipher] = sealed.split('.')
    const flipped = cipher!.startsWith('A') ? `B${cipher!.slice(1)}` : `A${cipher!.slice(1)}`
    expect(
      await box.open([v, id, iv, flipped].join('.'), 'mcp_connections:wiki:deployment'),
    ).toBeNull()
  })

  it('rotates: the previous key still opens its values, which are no longer current', async () => {
    const before = await SealedBox.fromKeys(OLD)
    const sealed = await before.seal('token', 'r')
    const after = await SealedBox.fromKeys(NEW, OLD)
    expect(await after.open(sealed, 'r')).toBe('token')
    expect(after.isCurrent(sealed)).toBe(false)
    expect(after.isCurrent(await after.seal('token', 'r'))).toBe(true)
  })

  it.each([
    ['not base64', '%%%'],
    ['16 bytes', btoa('k'.repeat(16))],
  ])('refuses a key that is %s, without showing it', async (_name, key) => {
    const err = await SealedBox.fromKeys(key).catch((e: unknown) => e as Error)
    expect(err).toBeInstanceOf(TypeError)
    expect((err as Error).message).toContain('openssl rand -base64 32')
    expect((err as Error).message).not.toContain(key)
  })
})
