import { describe, expect, it } from 'vitest'
import { progressText, statusLine, type RunProgress } from '../../src/slack/progress-message'

describe('statusLine', () => {
  it.each<[RunProgress, string]>([
    [{ doing: 'thinking', step: 1 }, 'step 1 · thinking …'],
    [
      { doing: 'calling', step: 3, calls: [{ tool: 'search_logs', args: { service: 'gateway' } }] },
      'step 3 · search_logs(service=gateway) …',
    ],
    [
      {
        doing: 'waiting_for_approval',
        step: 2,
        calls: [{ tool: 'rollback_deploy', args: { service: 'order', version: 41 } }],
      },
      'step 2 · waiting for approval: rollback_deploy(service=order, version=41)',
    ],
    [
      { doing: 'done', ok: true, stopReason: 'finish', steps: 5, tokens: 2310, costUsd: 0.0042 },
      'done in 5 steps · 2,310 tokens · $0.004',
    ],
    [
      { doing: 'done', ok: true, stopReason: 'finish', steps: 1, tokens: 1234567, costUsd: 3.5 },
      'done in 1 step · 1,234,567 tokens · $3.50',
    ],
    [
      { doing: 'done', ok: true, stopReason: 'finish', steps: 2, tokens: 40, costUsd: 0.00001 },
      'done in 2 steps · 40 tokens · <$0.001',
    ],
    [
      { doing: 'done', ok: false, stopReason: 'max_steps', steps: 8, tokens: 900 },
      'stopped (max_steps) after 8 steps · 900 tokens',
    ],
  ])('%j → %s', (progress, line) => {
    expect(statusLine(progress)).toBe(line)
  })

  it('keeps model-chosen arguments short, escaped and on one line', () => {
    const line = statusLine({
      doing: 'calling',
      step: 1,
      calls: [
        { tool: 'http_get', args: { url: `https://x.test/${'a'.repeat(100)}` } },
        { tool: 'search_logs', args: { service: '<!channel>\nping', query: 'x' } },
      ],
    })
    expect(line).toBe(
      `step 1 · http_get(url=https://x.test/${'a'.repeat(25)}…), ` +
        'search_logs(service=&lt;!channel&gt; ping, query=x) …',
    )
    const many = statusLine({
      doing: 'calling',
      step: 1,
      calls: Array.from({ length: 30 }, (_, i) => ({ tool: 'calculator', args: { e: `${i}` } })),
    })
    expect(many.length).toBeLessThan(320)
    expect(many).toMatch(/… …$/)
  })
})

describe('progressText', () => {
  it('keeps the task line of the first message and puts the status under it', () => {
    expect(
      progressText({
        runId: 'run_1',
        task: 'why is <b> slow?',
        progress: { doing: 'thinking', step: 2 },
      }),
    ).toBe(
      ':hourglass_flowing_sand: Working on it (run `run_1`): why is &lt;b&gt; slow?\nstep 2 · thinking …',
    )
  })
})
