import { describe, expect, it } from 'vitest'
import { parseEvalArgs } from '../../src/evals/index'

describe('npm run eval -- …', () => {
  it('defaults: every agent, k 3, 4 at once, nothing live', () => {
    expect(parseEvalArgs([])).toMatchObject({
      mode: 'eval',
      agents: [],
      k: 3,
      concurrency: 4,
      model: null,
      baseline: null,
      threshold: 0.1,
      out: 'eval-report',
      live: false,
    })
  })

  it('reads agents, flags with a space or an =, and the modes', () => {
    expect(
      parseEvalArgs([
        'oncall',
        '--k',
        '5',
        '--concurrency=2',
        '--model',
        'gpt-x',
        'triage',
        '--baseline',
        'b.json',
        '--threshold',
        '0.34',
      ]),
    ).toMatchObject({
      agents: ['oncall', 'triage'],
      k: 5,
      concurrency: 2,
      model: 'gpt-x',
      baseline: 'b.json',
      threshold: 0.34,
    })
    expect(parseEvalArgs(['--from-run', 'run_abc'])).toMatchObject({
      mode: 'from-run',
      fromRun: 'run_abc',
    })
    expect(parseEvalArgs(['--replay', 'oncall'])).toMatchObject({
      mode: 'replay',
      agents: ['oncall'],
    })
    expect(parseEvalArgs(['--remodel', '--instructions', 'new.md', '--live-reads'])).toMatchObject({
      mode: 'remodel',
      instructions: 'new.md',
      liveReads: true,
    })
  })

  it.each([
    [['--k', '0'], '--k must be a whole number >= 1, got "0"'],
    [['--k', 'three'], '--k must be a whole number >= 1, got "three"'],
    [['--model'], '--model needs a value'],
    [['--threshold', '2'], '--threshold must be between 0 and 1, got "2"'],
    [['--verbose'], 'unknown flag --verbose'],
    [['--remodel'], '--remodel needs --model or --instructions'],
  ])('%j: %s, with the usage', (argv, message) => {
    expect(() => parseEvalArgs(argv)).toThrow(message)
    expect(() => parseEvalArgs(argv)).toThrow('usage: npm run eval')
  })
})
