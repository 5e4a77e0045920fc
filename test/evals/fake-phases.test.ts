import { describe, expect, it } from 'vitest'
import type { EvalCase } from '../../agents/define-eval'
import { fakePhases, type EvalFile } from '../../src/evals/index'

const c = (name: string, fakes: EvalCase['fakes'] = []): EvalCase => ({
  name,
  task: 't',
  fakes,
  expect: {},
})
const file = (cases: EvalCase[]): EvalFile => ({ file: 'agents/a.eval.ts', agent: 'a', cases })
const names = (phases: EvalFile[][]) =>
  phases.map((p) => p.flatMap((f) => f.cases.map((x) => x.name)))

describe('cases split by their fakes', () => {
  it('cases whose fakes agree (or that have none) run together', () => {
    const up = { url: 'https://status.test/health', body: 'ok' }
    expect(
      names(
        fakePhases([
          file([
            c('a', [up]),
            c('b', [up]),
            c('c'),
            c('d', [{ url: 'https://other.test/', body: 'x' }]),
          ]),
        ]),
      ),
    ).toEqual([['a', 'b', 'c', 'd']])
  })

  it.each([
    ['the same URL, another body', { url: 'https://status.test/health', body: 'down' }],
    [
      'the same URL, another status',
      { url: 'https://status.test/health', body: 'ok', status: 503 },
    ],
    ['a prefix covering it', { url: 'https://status.test/*', body: 'down' }],
  ])('%s: a phase of its own, order kept', (_label, other) => {
    const up = { url: 'https://status.test/health', body: 'ok' }
    expect(
      names(fakePhases([file([c('up', [up]), c('down', [other]), c('up-again', [up])])])),
    ).toEqual([['up', 'up-again'], ['down']])
  })

  it('another method or a URL outside the prefix does not conflict', () => {
    const phases = fakePhases([
      file([
        c('get', [{ url: 'https://api.test/x', body: 1 }]),
        c('post', [{ method: 'POST', url: 'https://api.test/x', body: 2 }]),
        c('prefix', [{ url: 'https://api.test/y*', body: 3 }]),
      ]),
    ])
    expect(names(phases)).toEqual([['get', 'post', 'prefix']])
  })
})
