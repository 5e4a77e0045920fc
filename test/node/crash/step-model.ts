/**
 * The fake provider for crash tests: OpenAI chat completions, checked as strictly as
 * test/fakes/fake-openai.ts checks them (it answers through a FakeOpenAI), but the reply is
 * chosen by the step the request is for (the number of assistant turns in its messages), not
 * by arrival order. A run that is killed and asks again for the same step gets the same reply,
 * as a deterministic model would. Scripts are found by the run's task, so runs may overlap.
 */
import { FakeOpenAI, type FakeReply } from '../../fakes/fake-openai'
import type { FakeHandler } from '../../fakes/outbound'

export class StepModel {
  readonly violations: string[] = []
  readonly #scripts = new Map<string, FakeReply[]>()

  constructor(readonly apiKey: string) {}

  /** The replies, by step, for the run whose task is `task`. */
  script(task: string, replies: FakeReply[]): this {
    this.#scripts.set(task, replies)
    return this
  }

  readonly handler: FakeHandler = async (req) => {
    const { task, step } = modelStepOf(await req.clone().text())
    const replies = [...this.#scripts.entries()].find(([t]) => task.includes(`[${t}]`))?.[1]
    const api = new FakeOpenAI({ apiKey: this.apiKey })
    const next = replies?.[step]
    if (next) api.enqueue(next)
    else this.violations.push(`no scripted reply for step ${step} of task ${task.slice(0, 80)}`)
    const res = await api.handler(req)
    this.violations.push(...api.violations)
    return res
  }
}

/** Which run (its task: the first user message) and which step a chat-completions body asks for. */
export function modelStepOf(body: string): { task: string; step: number } {
  let messages: { role?: string; content?: unknown }[] = []
  try {
    messages = (JSON.parse(body) as { messages?: typeof messages }).messages ?? []
  } catch {
    // not JSON: FakeOpenAI rejects it
  }
  const task = String(messages.find((m) => m.role === 'user')?.content ?? '')
  return { task, step: messages.filter((m) => m.role === 'assistant').length }
}
