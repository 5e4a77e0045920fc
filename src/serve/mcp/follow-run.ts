import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import type { EventStreamLimits } from '../../config/event-streams'
import type { RunStoreApi, RunView } from '../../runs/types'

/** What following a run needs: who follows it (its streams count as that token's), and how long. */
export interface FollowOptions {
  holder: string
  limits: EventStreamLimits
  /** Past this, following stops and `followRun` answers `null` (the run goes on). */
  waitMs: number
  /** The request's signal: a client that went away stops the following, not the run. */
  signal: AbortSignal
  /** Where to start in the run's stored events: a resumed stream's last (0: from the start). */
  after?: number
  /**
   * Each time the view changes in what a person watching would see (status, step, pending),
   * with the sequence number of the last stored event read so far.
   */
  onChange: (view: RunView, seq: number) => Promise<void>
}

/** How following ended: the ended run's view, or null (deadline, request gone); the last seq read. */
export interface Followed {
  view: RunView | null
  seq: number
}

/**
 * Follows run `id` until it ends: woken by its event stream (docs/architecture.md#events), so
 * the stream limits count an MCP call waiting for a run as they count any stream of the token
 * (EVENT_STREAMS_PER_TOKEN), and re-reading the run's view at each wake-up, the one source of
 * its status. Answers the ended run's view, or null when `waitMs` passed or the request ended,
 * and the sequence number of the last stored event read (where a resumed stream goes on from).
 */
export async function followRun(
  stub: RunStoreApi,
  id: string,
  options: FollowOptions,
): Promise<Followed> {
  const deadline = Date.now() + options.waitMs
  const after = options.after ?? 0
  const opened = await stub.events({ after, holder: options.holder, limits: options.limits })
  if (!opened) throw new McpError(ErrorCode.InternalError, `run ${id} is gone`)
  if (!opened.ok) {
    const setting = opened.scope === 'run' ? 'EVENT_STREAMS_PER_RUN' : 'EVENT_STREAMS_PER_TOKEN'
    throw new McpError(
      ErrorCode.InvalidRequest,
      `token "${options.holder}" follows too many runs at once (${setting} = ${opened.limit}); call with a task (params.task) and poll tasks/get, or retry later`,
      { code: 'too_many_streams', setting, limit: opened.limit, runId: id },
    )
  }
  const reader = opened.stream.getReader()
  const seqs = new SeqReader(after)
  let seen = ''
  try {
    for (;;) {
      const view = await stub.get()
      if (!view) throw new McpError(ErrorCode.InternalError, `run ${id} is gone`)
      if (view.status === 'succeeded' || view.status === 'failed') return { view, seq: seqs.last }
      const shown = `${view.status}/${view.stepCount}/${view.pendingApprovals.length}/${view.descendantApprovals.length}`
      if (shown !== seen) {
        seen = shown
        await options.onChange(view, seqs.last)
      }
      const woke = await nextWake(reader, seqs, deadline, options.signal)
      if (woke === 'deadline' || woke === 'aborted') return { view: null, seq: seqs.last }
      // A stream that ended (the run finished, or it fell behind) leaves polling the view.
      if (woke === 'ended') await sleep(Math.min(1_000, Math.max(0, deadline - Date.now())))
    }
  } finally {
    reader.cancel().catch(() => {})
  }
}

type Wake = 'event' | 'ended' | 'deadline' | 'aborted'

/** The next chunk of the stream, or why none is awaited any longer. */
function nextWake(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  seqs: SeqReader,
  deadline: number,
  signal: AbortSignal,
): Promise<Wake> {
  if (signal.aborted) return Promise.resolve('aborted')
  return new Promise<Wake>((resolve) => {
    const timer = setTimeout(() => done('deadline'), Math.max(0, deadline - Date.now()))
    const onAbort = () => done('aborted')
    signal.addEventListener('abort', onAbort, { once: true })
    function done(wake: Wake) {
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      resolve(wake)
    }
    reader.read().then(
      (r) => {
        if (!r.done) seqs.read(r.value)
        done(r.done ? 'ended' : 'event')
      },
      () => done('ended'),
    )
  })
}

/**
 * The `id:` lines of the run's event stream (runs/events/event-stream.ts writes one per stored
 * event, its sequence number; live deltas have none), across chunks that split a line.
 */
class SeqReader {
  private readonly decoder = new TextDecoder()
  private carry = ''
  constructor(public last: number) {}

  read(chunk: Uint8Array): void {
    const lines = (this.carry + this.decoder.decode(chunk, { stream: true })).split('\n')
    this.carry = lines.pop() ?? ''
    for (const line of lines) {
      const m = /^id: ?(\d+)$/.exec(line)
      if (m) this.last = Math.max(this.last, Number(m[1]))
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
