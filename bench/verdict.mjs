// Every bench's goals are judged here, so that none can print PASS from nothing: a figure that
// is missing, not a finite number, zero, or below what its clock can tell apart from zero (its
// resolution) gives "no measurement", which `npm run bench` counts as a missed goal and exits
// non-zero on (a loaded machine once gave the service bench 0.00 ms over 0.00 ms, and four PASS).
// docs/development.md#benchmarks-that-cannot-pass-on-nothing.

export const NO_MEASUREMENT = 'no measurement'

/**
 * Why `figures` cannot be judged, or undefined when each can. `figures`: name → value, or
 * name → [value, resolution] (the least value that is a measurement; zero by default, and zero
 * itself is never one).
 */
export function unmeasured(figures) {
  const why = []
  for (const [name, given] of Object.entries(figures)) {
    const [value, resolution = 0] = Array.isArray(given) ? given : [given]
    if (value === undefined || value === null) why.push(`${name} missing`)
    else if (typeof value !== 'number' || !Number.isFinite(value)) why.push(`${name} is ${value}`)
    else if (value === 0) why.push(`${name} is 0`)
    else if (Math.abs(value) < resolution) why.push(`${name} ${value} below ${resolution}`)
  }
  return why.length ? why.join(', ') : undefined
}

/**
 * The verdict word of a goal: `PASS` or `FAIL` from `ok()` (called only when every figure is a
 * measurement), else `no measurement (…why)`.
 */
export function judge(figures, ok) {
  const why = unmeasured(figures)
  if (why) return `${NO_MEASUREMENT} (${why})`
  return ok() ? 'PASS' : 'FAIL'
}

/** A verdict line that starts with its word: `PASS text`, `FAIL text`, `no measurement (…): text`. */
export function verdictLine(figures, ok, text) {
  const word = judge(figures, ok)
  return word.startsWith(NO_MEASUREMENT) ? `${word}: ${text}` : `${word} ${text}`
}

/** Whether a report line records a goal missed: FAIL, NOT met, or no measurement. */
export const missedGoal = (line) => /\bFAIL\b|NOT met|\bno measurement\b/.test(line)

/**
 * Waits until `ready()` resolves true, polling every `pollMs`, for at most `seconds` of the
 * readiness budget (BENCH_READY_SECONDS scales it, for a loaded machine); past that it throws a
 * ReadinessTimeout whose message is one line naming what was awaited and the setting to raise.
 */
export async function waitReady(what, ready, { seconds = 60, pollMs = 5 } = {}) {
  const limitMs = readySeconds(seconds) * 1000
  const deadline = Date.now() + limitMs
  for (;;) {
    if (await ready()) return
    if (Date.now() > deadline) throw new ReadinessTimeout(what, limitMs / 1000)
    await new Promise((r) => setTimeout(r, pollMs))
  }
}

/** `seconds` scaled by BENCH_READY_SCALE (a factor, default 1): how long a bench waits for a thing. */
export function readySeconds(seconds) {
  const raw = process.env.BENCH_READY_SCALE
  const scale = raw === undefined || raw === '' ? 1 : Number(raw)
  if (!(scale > 0))
    throw new ReadinessTimeout(`BENCH_READY_SCALE must be a positive number (got "${raw}")`, 0)
  return seconds * scale
}

/**
 * A bench gave up waiting (after `seconds`), or what it waited for cannot come (`seconds` 0: then
 * `what` is the whole sentence); its message is the one line `npm run bench` prints.
 */
export class ReadinessTimeout extends Error {
  constructor(what, seconds) {
    super(
      seconds
        ? `bench: timed out after ${seconds} s waiting for ${what}; on a loaded machine raise BENCH_READY_SCALE (now ${process.env.BENCH_READY_SCALE ?? 1})`
        : `bench: ${what}`,
    )
    this.name = 'ReadinessTimeout'
  }
}

/** `promise`, or a ReadinessTimeout once `seconds` of the scaled readiness budget have passed. */
export async function within(what, promise, seconds = 60) {
  const limit = readySeconds(seconds)
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new ReadinessTimeout(what, limit)), limit * 1000)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}
