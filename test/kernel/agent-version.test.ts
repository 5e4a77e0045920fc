import { describe, expect, it } from 'vitest'
import { agentVersion } from '../../src/kernel/agent-schema'
import { canonicalJson } from '../../src/kernel'

/** FNV-1a 64 as its definition reads, in BigInt: the reference the fast version must match. */
function reference(content: unknown): string {
  const text = canonicalJson(content)
  let h = 0xcbf29ce484222325n
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i))
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn
  }
  return h.toString(16).padStart(16, '0').slice(0, 12)
}

const LONG = 'Read the logs first; quote what you find. '.repeat(40)

describe('agentVersion', () => {
  it.each([
    ['an empty object', {}],
    ['the default agent', { name: 'default', instructions: null, output: null, tools: [] }],
    ['non-ASCII text', { instructions: 'Répondez en français — 日本語 😀', tools: ['a', 'b'] }],
    ['long instructions', { instructions: 'Read the logs first. '.repeat(300), protocol: 'text' }],
    ['a schema', { output: { type: 'object', properties: { n: { type: 'integer' } } } }],
    // Long instructions take the cached path: the state after them is kept per text.
    ['a snapshot', { instructions: LONG, model: null, name: 'a', output: { type: 'object' } }],
    ['long instructions alone', { instructions: LONG }],
    ['a key that sorts before them', { a: 1, instructions: LONG, tools: ['t'] }],
    ['an undefined key before them', { a: undefined, instructions: LONG }],
    ['quotes and escapes in them', { instructions: `"\\\n\u2028${LONG}`, z: [1, { y: 2 }] }],
  ])('is FNV-1a 64 of the canonical JSON for %s', (_, content) => {
    expect(agentVersion(content)).toBe(reference(content))
    expect(agentVersion(content)).toMatch(/^[0-9a-f]{12}$/)
  })

  it('gives the same digits from its cache as the first time', () => {
    const content = { instructions: LONG, name: 'x', tools: ['a'] }
    const first = agentVersion(content)
    expect(agentVersion({ ...content })).toBe(first)
    expect(agentVersion({ ...content, name: 'y' })).toBe(reference({ ...content, name: 'y' }))
    expect(agentVersion({ ...content, name: 'y' })).not.toBe(first)
  })

  it('remembers plain data by its JSON text, and never confuses it with what only prints the same', () => {
    const at = new Date(0)
    // A Date prints as its ISO string, but canonical JSON writes it as an object: not the same.
    const dated = { name: 'd', output: { at }, tools: ['t'] }
    const printed = { name: 'd', output: { at: at.toISOString() }, tools: ['t'] }
    for (let i = 0; i < 2; i++) {
      expect(agentVersion(printed)).toBe(reference(printed))
      expect(agentVersion(dated)).toBe(reference(dated))
    }
    expect(agentVersion(dated)).not.toBe(agentVersion(printed))
    // Key order changes the JSON text, never the version.
    const shuffled = { tools: ['t'], output: { at: at.toISOString() }, name: 'd' }
    expect(agentVersion(shuffled)).toBe(agentVersion(printed))
    // The same for the rest beside long instructions.
    const boxed = { instructions: LONG, name: new String('n') }
    const plain = { instructions: LONG, name: 'n' }
    expect(agentVersion(plain)).toBe(reference(plain))
    expect(agentVersion(boxed)).toBe(reference(boxed))
    expect(agentVersion(boxed)).not.toBe(agentVersion(plain))
  })

  it('keeps a copy of each content it remembers: a caller changing its objects later is seen', () => {
    const tools = ['a']
    const policy = { mode: 'ask' }
    const content = { name: 'kept', instructions: null, tools, policy }
    const first = agentVersion(content)
    expect(agentVersion({ ...content, tools: ['a'], policy: { mode: 'ask' } })).toBe(first)
    tools.push('b')
    policy.mode = 'deny'
    expect(agentVersion(content)).toBe(reference(content))
    expect(agentVersion(content)).not.toBe(first)
    // A value canonical JSON writes as null (NaN) is not taken for null.
    expect(agentVersion({ name: 'n', temperature: NaN })).toBe(
      reference({ name: 'n', temperature: NaN }),
    )
    expect(agentVersion({ name: 'n', temperature: null })).toBe(
      reference({ name: 'n', temperature: null }),
    )
  })

  it('tells contents apart', () => {
    expect(agentVersion({ instructions: 'a' })).not.toBe(agentVersion({ instructions: 'b' }))
  })
})
