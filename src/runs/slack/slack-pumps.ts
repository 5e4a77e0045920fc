import type { Outbox, OutboxEntry } from '../outbox/outbox'
import { ProgressPump } from './slack-progress'
import { STATUS_ID } from './slack-status'
import { STREAM_ID } from './slack-stream'

/**
 * The coalesced Slack entries sent while a slice runs (docs/architecture.md#slack): the progress
 * message, the answer stream and the assistant thread status, one pump each.
 */
export class SlackPumps {
  readonly #progress: ProgressPump
  readonly #stream: ProgressPump
  readonly #status: ProgressPump

  constructor(outbox: Outbox, send: (entry: OutboxEntry) => Promise<void>) {
    this.#progress = new ProgressPump(outbox, send)
    this.#stream = new ProgressPump(outbox, send, STREAM_ID)
    this.#status = new ProgressPump(outbox, send, STATUS_ID)
  }

  /** A slice begins: only a run that reports to Slack sends, and only what the app has on. */
  start(slack: boolean, settings: { stream: boolean; assistant: boolean }): void {
    this.#progress.start(slack)
    this.#stream.start(slack && settings.stream)
    this.#status.start(slack && settings.assistant)
  }

  /** A transition was saved: send what is due. */
  poke(): void {
    this.#progress.poke()
    this.#stream.poke()
    this.#status.poke()
  }

  /** Text of the answer arrived. */
  pokeStream(): void {
    this.#stream.poke()
  }

  /** The slice ended: let the sends in flight finish. */
  async stop(): Promise<void> {
    await this.#progress.stop()
    await this.#stream.stop()
    await this.#status.stop()
  }
}
