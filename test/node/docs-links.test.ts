import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * The README is the front door and the docs/ pages hold the rest, so a reader moves between them
 * by links: every relative link in README.md and docs/*.md must reach a file of the repository,
 * and every #anchor a heading of the page it names (as GitHub makes anchors from headings).
 */

const root = join(import.meta.dirname, '..', '..')
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

/** The text outside fenced code blocks, where a heading is a heading. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '')
}

/** GitHub's anchor for each heading: lower case, punctuation dropped, spaces to dashes. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = heading!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\- _]/gu, '')
      .replace(/ /g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

function links(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]*`/g, '')
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!)
}

describe.each(pages)('%s', (page) => {
  const markdown = readFileSync(join(root, page), 'utf8')
  const local = links(markdown).filter((l) => !/^[a-z]+:/i.test(l))

  it('links only files that exist, and headings that exist in them', () => {
    const broken: string[] = []
    for (const link of local) {
      const [path, anchor] = link.split('#') as [string, string | undefined]
      const target = path === '' ? join(root, page) : join(root, dirname(page), path)
      if (!existsSync(target)) broken.push(`${link}: ${relative(root, target)} does not exist`)
      else if (anchor === undefined) continue
      else if (!statSync(target).isFile() || !target.endsWith('.md')) {
        broken.push(`${link}: an anchor needs a page`)
      } else if (!anchors(readFileSync(target, 'utf8')).has(anchor)) {
        broken.push(`${link}: no heading #${anchor} in ${relative(root, target)}`)
      }
    }
    expect(broken).toEqual([])
  })
})

it('reaches every docs/ page from the README, following links', () => {
  const reached = new Set(['README.md'])
  const queue = ['README.md']
  for (let page = queue.pop(); page !== undefined; page = queue.pop()) {
    for (const link of links(readFileSync(join(root, page), 'utf8'))) {
      const path = link.split('#')[0]!
      if (/^[a-z]+:/i.test(link) || !path.endsWith('.md')) continue
      const target = relative(root, join(root, dirname(page), path))
      if (pages.includes(target) && !reached.has(target)) reached.add(target) && queue.push(target)
    }
  }
  expect(pages.filter((p) => !reached.has(p))).toEqual([])
})
