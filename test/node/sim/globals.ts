/**
 * The process-wide platform the product code reaches without a binding: the clock (`Date`,
 * `performance.now`), timers (and `AbortSignal.timeout`), `fetch`, `crypto` (random values and the Web Crypto calls the
 * product makes) and `Math.random`, all pointed at the current simulation. Installed once; each
 * schedule points them at its own Sim. Web Crypto's digest and HMAC are computed at once with
 * node:crypto: the real ones finish on a thread pool, outside the scheduler's control.
 */
import { createHash, createHmac } from 'node:crypto'
import { mulberry32 } from './chooser'
import type { Sim } from './sim'

interface Current {
  sim: Sim
  fetch: typeof fetch
  random: () => number
}

let current: Current | undefined
const RealDate = Date

function sim(): Sim {
  if (!current) throw new Error('no simulation is running')
  return current.sim
}

export function useSimulation(s: Sim, fetchImpl: typeof fetch, seed: number): void {
  current = { sim: s, fetch: fetchImpl, random: mulberry32(seed ^ 0x5eed) }
}

type TimerHandle = { id: number; unref(): TimerHandle; ref(): TimerHandle; hasRef(): boolean }
const timers = new Map<number, ReturnType<Sim['schedule']>>()
let timerSeq = 0

function handle(id: number): TimerHandle {
  const h: TimerHandle = { id, unref: () => h, ref: () => h, hasRef: () => false }
  Object.defineProperty(h, Symbol.toPrimitive, { value: () => id })
  return h
}

function setTimer(
  fn: (...a: unknown[]) => void,
  ms: number,
  repeat: boolean,
  args: unknown[],
): TimerHandle {
  const s = sim()
  const id = ++timerSeq
  const delay = Math.max(1, Number(ms) || 0)
  const arm = () => {
    timers.set(
      id,
      s.schedule(`timer ${delay}ms`, delay, () => {
        if (repeat) arm()
        else timers.delete(id)
        fn(...args)
      }),
    )
  }
  arm()
  return handle(id)
}

function clearTimer(h: unknown): void {
  const id = typeof h === 'object' && h ? (h as TimerHandle).id : Number(h)
  const ev = timers.get(id)
  if (ev && current) current.sim.cancel(ev)
  timers.delete(id)
}

class SimDate extends RealDate {
  constructor(...args: unknown[]) {
    if (args.length === 0) super(sim().now)
    else super(...(args as [string]))
  }
  static override now(): number {
    return sim().now
  }
}

let installed = false

export function installSimulatedGlobals(): void {
  if (installed) return
  installed = true
  const g = globalThis as Record<string, unknown>
  g.Date = SimDate
  g.setTimeout = (fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) =>
    setTimer(fn, ms ?? 0, false, args)
  g.setInterval = (fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) =>
    setTimer(fn, ms ?? 0, true, args)
  g.clearTimeout = clearTimer
  g.clearInterval = clearTimer
  g.fetch = (input: RequestInfo | URL, init?: RequestInit) => current!.fetch(input, init)
  Math.random = () => (current ? current.random() : 0.5)
  // On the scheduler's clock too: a slow callback or MCP server times out in simulated time.
  AbortSignal.timeout = (ms: number) => {
    const controller = new AbortController()
    setTimer(
      () => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')),
      ms,
      false,
      [],
    )
    return controller.signal
  }
  Object.defineProperty(performance, 'now', {
    value: () => sim().now - 1_700_000_000_000,
    configurable: true,
  })
  const subtle = {
    digest: async (_alg: string, data: BufferSource) => {
      sim().activity++
      return bytes(createHash('sha256').update(view(data)).digest())
    },
    importKey: async (_f: string, key: BufferSource) => ({ secret: Buffer.from(view(key)) }),
    sign: async (_alg: string, key: { secret: Buffer }, data: BufferSource) => {
      sim().activity++
      return bytes(createHmac('sha256', key.secret).update(view(data)).digest())
    },
  }
  const crypto = {
    subtle,
    getRandomValues: <T extends ArrayBufferView>(array: T): T => {
      const b = new Uint8Array(array.buffer, array.byteOffset, array.byteLength)
      for (let i = 0; i < b.length; i++) b[i] = Math.floor(Math.random() * 256)
      return array
    },
    randomUUID: () => {
      const h = Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16))
      h[12] = '4'
      return `${h.slice(0, 8).join('')}-${h.slice(8, 12).join('')}-${h.slice(12, 16).join('')}-${h.slice(16, 20).join('')}-${h.slice(20).join('')}`
    },
  }
  Object.defineProperty(globalThis, 'crypto', { value: crypto, configurable: true, writable: true })
}

function view(data: BufferSource): Uint8Array {
  return ArrayBuffer.isView(data)
    ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    : new Uint8Array(data)
}

function bytes(b: Buffer): ArrayBuffer {
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer
}
