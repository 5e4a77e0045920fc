import { reply, type FakeReply } from '../../fakes/fake-openai'
import { postCall, readCall } from '../crash/crash-points'
import { seededRandom } from '../seeded-random'

/** A seeded pseudo-random source, so a failing soak can be replayed by its seed. */
export const random = seededRandom

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
