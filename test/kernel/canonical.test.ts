import { describe, expect, it } from 'vitest'
import { canonicalJson, sameJson } from '../../src/kernel/index'

// sameJson is what the loop guard compares arguments with; canonicalJson strings are the
// definition of "the same arguments" (keys in any order), so the two must always agree.
const values: unknown[] = [
  {},
  { q: 'cat' },
  { q: 'cat', lang: 'en' },
  { lang: 'en', q: 'cat' },
  { q: 'cat', lang: 'fr' },
  { q: 'cat', lang: null },
  { q: 'cat', lang: undefined },
  { q: ['a', 'b'] },
  { q: ['b', 'a'] },
  { q: ['a'] },
  { q: ['a', 'b', 'c'] },
  { q: { deep: { x: 1, y: [1, { z: 2 }] } } },
  { q: { deep: { y: [1, { z: 2 }], x: 1 } } },
  { q: { deep: { y: [1, { z: 3 }], x: 1 } } },
  { q: 1 },
  { q: 1.0 },
  { q: '1' },
  { q: true },
  { q: null },
  { q: {} },
  { q: [] },
  [],
  [{}],
  null,
  'cat',
  0,
]

describe('sameJson', () => {
  it('agrees with comparing canonicalJson strings, for every pair', () => {
    for (const a of values) {
      for (const b of values) {
        expect([a, b, sameJson(a, b)]).toEqual([a, b, canonicalJson(a) === canonicalJson(b)])
      }
    }
  })
})
