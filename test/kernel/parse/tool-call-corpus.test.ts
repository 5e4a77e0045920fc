import { describe, expect, it } from 'vitest'
import corpusText from '../../fixtures/tool-call-corpus.jsonl?raw'
import {
  FINISH,
  UNPARSABLE,
  parseOutput,
  type ToolShape,
  type ToolShapes,
} from '../../../src/kernel/parse/index'

/**
 * The public corpus: real outputs from model cards, chat templates and public tool
 * parsers' tests, one JSON object a line, each naming its source.
 */
interface CorpusLine {
  family: string
  raw: string
  expect:
    | { call: { name: string; args: Record<string, unknown> } }
    | { final: string }
    | { unparsable: true }
  source: string
  note?: string
  tools?: Record<string, Record<string, string>>
}

const corpus: CorpusLine[] = corpusText
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as CorpusLine)

function shapes(tools: CorpusLine['tools']): ToolShapes | undefined {
  if (!tools) return undefined
  const map = new Map<string, ToolShape>()
  for (const [name, params] of Object.entries(tools)) map.set(name, { params, required: [] })
  return map
}

const FAMILIES = [
  'json',
  'hermes',
  'qwen3-coder',
  'glm',
  'llama',
  'mistral',
  'deepseek',
  'kimi',
  'harmony',
  'xml',
  'cohere',
  'react',
  'python',
  'repair',
  'drafts',
  'prose',
]

describe('the tool-call corpus', () => {
  it('is large, covers every family, and names a source for each line', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(120)
    for (const family of FAMILIES) {
      expect(
        corpus.some((c) => c.family === family),
        family,
      ).toBe(true)
      // Every family has a negative beside its positives, except the pure repair lines.
      if (!['json', 'repair', 'drafts', 'prose'].includes(family)) {
        expect(
          corpus.some((c) => c.family === family && 'unparsable' in c.expect),
          `${family} has a negative`,
        ).toBe(true)
      }
    }
    for (const c of corpus) expect(c.source, c.raw).toMatch(/\S/)
  })

  it.each(corpus.map((c, i) => [`${i + 1} ${c.family}: ${c.note ?? c.raw.slice(0, 50)}`, c]))(
    '%s',
    (_label, c) => {
      const out = parseOutput(c.raw, { tools: shapes(c.tools) })
      if ('call' in c.expect) {
        expect(out.call).toEqual({
          ...c.expect.call,
          ...(out.call.repaired ? { repaired: true } : {}),
        })
      } else if ('final' in c.expect) {
        expect(out.call).toEqual({ name: FINISH, args: { answer: c.expect.final } })
      } else {
        expect(out.call.name).toBe(UNPARSABLE)
      }
    },
  )
})
