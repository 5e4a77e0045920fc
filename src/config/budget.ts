/**
 * The service's side of the kernel's budget table (BUDGET_KEYS in src/kernel/budget.ts): the
 * settings that limit a run's budget, the maxima and defaults they make, and a run's budget
 * resolved against them. A new budget key with a setting is a row of that table, nothing here.
 */
import { BUDGET_ROWS, DEFAULT_BUDGET, type Budget, type BudgetSettingName } from '../kernel/budget'
import * as setting from '../settings/setting'
import type { Setting } from '../settings/setting'

/** The budget keys a deployment limits, with the setting that does it. */
const LIMITED = BUDGET_ROWS.flatMap(([key, rule]) => (rule.setting ? [{ key, rule }] : []))

/** Each budget setting, by variable name, with the key's bounds unless it names its own. */
export const BUDGET_SETTINGS = Object.fromEntries(
  LIMITED.map(({ rule }) => {
    const s = rule.setting!
    const min = s.min ?? rule.min ?? 0
    const max = s.max ?? rule.max
    const integer = s.integer ?? rule.integer ?? false
    return [
      s.name,
      setting.number({
        min,
        ...(max !== undefined ? { max } : {}),
        integer,
        ...(s.fallback !== undefined ? { fallback: s.fallback } : {}),
      }),
    ]
  }),
) as Record<BudgetSettingName, Setting<number | undefined>>

/** What a deployment allows a run: the most it may ask for, and what it gets by default. */
export interface ServerBudgets {
  /** Server maxima: a run may ask for less, never more. */
  maxBudget: Budget
  /** Defaults for runs that ask for nothing. */
  defaultBudget: Budget
}

/** The maxima and defaults that the budget settings' values (read with BUDGET_SETTINGS) make. */
export function serverBudgets(values: Readonly<Record<string, unknown>>): ServerBudgets {
  const maxBudget: Budget = { ...DEFAULT_BUDGET }
  const defaultBudget: Budget = { ...DEFAULT_BUDGET }
  for (const { key, rule } of LIMITED) {
    const value = values[rule.setting!.name]
    if (typeof value !== 'number') continue
    maxBudget[key] = value
    defaultBudget[key] =
      rule.setting!.role === 'maximum' && rule.default !== undefined
        ? Math.min(rule.default, value)
        : value
  }
  return { maxBudget, defaultBudget }
}

/** What of `requested` passes the server maxima (`key value > limit`, in the table's order). */
export function overMaxima(maxBudget: Budget, requested: Partial<Budget> | undefined): string[] {
  const over: string[] = []
  for (const { key } of LIMITED) {
    const value = requested?.[key]
    const limit = maxBudget[key]
    if (value !== undefined && limit !== undefined && value > limit) {
      over.push(`${key} ${value} > ${limit}`)
    }
  }
  return over
}
