// Worker CPU as the operating system counts it: the workerd process's user + system time, read
// from /proc/<pid>/stat (Linux; 10 ms ticks, so a figure is read over a batch of requests worth
// a few hundred milliseconds, never per request). The process holds the Worker, its Durable
// Objects and Miniflare's entry worker; the Node clients and fakes run elsewhere.
import { readFileSync } from 'node:fs'

/** User + system CPU of a process, in milliseconds. */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  // utime and stime are fields 14 and 15 of the file; 12 and 13 after "pid (comm) ".
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

/** The middle value (the upper one of an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** CPU ms per wall-clock second workerd spends while nothing is asked of it (timers, GC). */
export async function idleRate(pid, ms = 1000) {
  const c0 = cpuMs(pid)
  const t0 = performance.now()
  await sleep(ms)
  return (cpuMs(pid) - c0) / ((performance.now() - t0) / 1000)
}

/**
 * Worker CPU of `work()`, less what workerd spends idle over the same wall time; `settleMs`
 * after it lets work the requests set off (alarms, outbox deliveries) finish inside the window.
 */
export async function measure(pid, idlePerSecond, work, settleMs = 50) {
  const c0 = cpuMs(pid)
  const t0 = performance.now()
  const out = await work()
  await sleep(settleMs)
  const wallMs = performance.now() - t0
  return { cpu: Math.max(0, cpuMs(pid) - c0 - (idlePerSecond * wallMs) / 1000), wallMs, out }
}
