import { reply, type FakeReply } from '../../fakes/fake-openai'
import { postCall, readCall } from '../crash/crash-points'

/** A seeded pseudo-random source (mulberry32), so a failing soak can be replayed by its seed. */
export function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * A run of one to four action steps, then the answer: read-only calls (alone or in parallel),
 * side effects (alone or beside a read), a calculation. Call ids are unique in the run.
 */
export function randomScript(tag: string, next: () => number): FakeReply[] {
  const steps: FakeReply[] = []
  const count = 1 + Math.floor(next() * 4)
  for (let k = 0; k < count; k++) {
    const shape = Math.floor(next() * 5)
    const calls =
      shape === 0
        ? [readCall(tag, `call_read_${k}`)]
        : shape === 1
          ? [readCall(tag, `call_read_${k}a`), readCall(tag, `call_read_${k}b`)]
          : shape === 2
            ? [postCall(`call_post_${k}`)]
            : shape === 3
              ? [postCall(`call_post_${k}`), readCall(tag, `call_read_${k}`)]
              : [
                  {
                    id: `call_calc_${k}`,
                    name: 'calculator',
                    arguments: { expression: `${k} + 1` },
                  },
                ]
    steps.push(reply.toolCalls(calls, { content: `Step ${k}.` }))
  }
  steps.push(reply.text(`Done after ${count} steps.`))
  return steps
}
