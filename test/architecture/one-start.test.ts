/**
 * Every run begins in src/runs/start/ (docs/architecture.md#starting-a-run): the RunStore's
 * `start` is called there and nowhere else, and the start's rules (the demo model's protocol,
 * the idempotency key's run id) are written there once, whoever starts the run.
 */
import { describe, expect, it } from 'vitest'

// Every module of the Worker, as text (paths from the repo root).
const sources: Record<string, string> = Object.fromEntries(
  Object.entries(
    import.meta.glob('/src/**/*.ts', { query: '?raw', import: 'default', eager: true }),
  ).map(([path, source]) => [path.slice(1), source as string]),
)

/** The files whose code (comments aside) matches `pattern`. */
function filesWith(pattern: RegExp, under = 'src/'): string[] {
  return Object.entries(sources)
    .filter(([path]) => path.startsWith(under))
    .filter(([, source]) =>
      source
        .split('\n')
        .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
        .some((line) => pattern.test(line)),
    )
    .map(([path]) => path)
    .sort()
}

describe('one place where a run starts', () => {
  it('calls the RunStore’s start only from src/runs/start/start-run.ts', () => {
    expect(filesWith(/\.start\(\{/)).toEqual(['src/runs/start/start-run.ts'])
  })

  it('writes the demo model’s protocol rule once, for every way in', () => {
    expect(filesWith(/DEMO_MODEL/, 'src/runs/')).toEqual(['src/runs/start/start-run.ts'])
    expect(filesWith(/DEMO_MODEL/, 'src/routes/')).toEqual([])
  })

  it('leaves routes/ no start of its own: they call startRun of src/runs/start', () => {
    expect(filesWith(/\bstartRun\(/, 'src/routes/')).toEqual([
      'src/routes/api/runs.ts',
      'src/routes/slack/slack.ts',
    ])
    // A delegated call, and a Slack message once its conversation is known.
    expect(filesWith(/\bstartRun\(/, 'src/runs/')).toEqual([
      'src/runs/child-runs.ts',
      'src/runs/start/slack-ask.ts',
    ])
  })
})
