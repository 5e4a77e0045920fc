/** How much the Worker logs: LOG_LEVEL (docs/configuration.md). */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, silent: 4 }

/** The level LOG_LEVEL names, or undefined when it names none (config reports that). */
export function parseLogLevel(value: string | undefined): LogLevel | undefined {
  const v = (value ?? '').trim()
  if (v === '') return 'info'
  return (LOG_LEVELS as readonly string[]).includes(v) ? (v as LogLevel) : undefined
}

/** Whether a line of `level` is written when the configured threshold is `threshold`. */
export function logs(threshold: string | undefined, level: Exclude<LogLevel, 'silent'>): boolean {
  // An unreadable LOG_LEVEL logs as info: a typo must not hide the error that reports it.
  return RANK[level] >= RANK[parseLogLevel(threshold) ?? 'info']
}
