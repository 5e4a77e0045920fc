/**
 * What the budget settings make of a run's budget: the server maxima, the defaults of a run that
 * asks for nothing, and the bounds of each setting (docs/configuration.md).
 */
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config'
import { overMaxima } from '../../src/config'

const config = (vars: Record<string, string> = {}) => loadConfig({ MODEL: 'demo', ...vars })

describe('budget settings', () => {
  it('unset, give the documented maxima and defaults', () => {
    const { maxBudget, defaultBudget } = config()
    // Keys no setting limits keep the kernel's default as their maximum.
    const fixed = { maxConsecutiveErrors: 3, maxObservationTokens: 2_000, loopGuardWindow: 3 }
    const asValues = { approvalTtlSeconds: 86_400, maxContextTokens: 32_000 }
    const more = { maxHistoryTokens: 4_000, maxParallelCalls: 8 }
    expect(maxBudget).toEqual({
      maxSteps: 50,
      maxPromptTokens: 500_000,
      maxSeconds: 900,
      ...fixed,
      ...asValues,
      ...more,
    })
    expect(defaultBudget).toEqual({
      maxSteps: 12,
      maxPromptTokens: 200_000,
      maxSeconds: 300,
      ...fixed,
      ...asValues,
      ...more,
    })
  })

  it('a maximum below the kernel default lowers the default too; above it, only the maximum', () => {
    // Not below the shipped agents' own budgets (agents/oncall.ts asks for 8 steps).
    const low = config({ MAX_STEPS: '10', MAX_SECONDS: '60', MAX_PROMPT_TOKENS: '1000' })
    expect(low.maxBudget).toMatchObject({ maxSteps: 10, maxSeconds: 60, maxPromptTokens: 1000 })
    expect(low.defaultBudget).toMatchObject({ maxSteps: 10, maxSeconds: 60, maxPromptTokens: 1000 })
    const high = config({ MAX_STEPS: '400' })
    expect(high.maxBudget.maxSteps).toBe(400)
    expect(high.defaultBudget.maxSteps).toBe(12)
  })

  it('a value setting is both the default and the maximum', () => {
    const c = config({
      MAX_CONTEXT_TOKENS: '2000',
      MAX_PARALLEL_CALLS: '2',
      MAX_HISTORY_TOKENS: '300',
      APPROVAL_TTL_SECONDS: '600',
      MAX_COST_USD: '0.5',
      PRICE_PROMPT_PER_1K_USD: '0.001',
    })
    const set = {
      maxContextTokens: 2000,
      maxParallelCalls: 2,
      maxHistoryTokens: 300,
      approvalTtlSeconds: 600,
      maxCostUsd: 0.5,
    }
    expect(c.maxBudget).toMatchObject(set)
    expect(c.defaultBudget).toMatchObject(set)
  })

  it.each([
    ['MAX_STEPS', '1001'],
    ['MAX_STEPS', '0'],
    ['MAX_SECONDS', '1.5'],
    ['MAX_SECONDS', '86401'],
    ['MAX_PROMPT_TOKENS', '100000001'],
    ['MAX_CONTEXT_TOKENS', '999'],
    ['MAX_PARALLEL_CALLS', '65'],
    ['MAX_HISTORY_TOKENS', '199'],
    ['MAX_HISTORY_TOKENS', '100001'],
    ['APPROVAL_TTL_SECONDS', String(30 * 86_400 + 1)],
    ['MAX_COST_USD', '-1'],
  ])('%s=%s is a ConfigError naming it', (name, value) => {
    expect(() => config({ [name]: value })).toThrow(ConfigError)
    expect(() => config({ [name]: value })).toThrow(name)
  })

  it('a run may ask for up to each maximum, and what passes one is named', () => {
    const { maxBudget } = config()
    expect(overMaxima(maxBudget, { maxSteps: 50, maxParallelCalls: 8 })).toEqual([])
    expect(overMaxima(maxBudget, { maxSteps: 51, approvalTtlSeconds: 86_401 })).toEqual([
      'maxSteps 51 > 50',
      'approvalTtlSeconds 86401 > 86400',
    ])
    // Keys no setting limits are bounded by the budget schema alone.
    expect(overMaxima(maxBudget, { maxConsecutiveErrors: 50 })).toEqual([])
  })
})
