/** `npm run build` says what it wrote and how big it is (a newcomer sees that it did something). */
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..')

describe('npm run build', () => {
  it('prints the folder, how many files and their sizes', () => {
    const out = execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], {
      cwd: ROOT,
      encoding: 'utf8',
    })
    const [summary, ...files] = out.trim().split('\n')
    expect(summary).toMatch(
      /^edgeloop build: the console's assets in dist\/assets \(4 files, \d+\.\d KiB\)$/,
    )
    expect(files.map((line) => line.trim().split(/\s+/)[0])).toEqual([
      'console/console.css',
      'console/console.js',
      'console/favicon.svg',
      'console/index.html',
    ])
    for (const line of files) expect(line).toMatch(/ \d+\.\d KiB$/)
  })
})
