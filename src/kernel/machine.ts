import { act, closeStartedCalls } from './act'
import { cancelApprovals, expireApprovals } from './approvals'
import type { EdgeSlice } from './budget'
import { countLostModelCall } from './model-call'
import { type RunState } from './state'
import { isPromise, type SyncOrAsync } from './sync-or-async'
import { think } from './think'
import { awaitChildren } from './delegate-calls'
import {
  cancelMessage,
  Slice,
  stopped,
  transitionTo,
  type Deps,
  type Follows,
  type Transition,
  type TransitionEvent,
} from './transition'

/**
 * The step machine (docs/architecture.md): `transition` performs exactly one transition of a
 * run and never throws on model output; `runSlice` loops it for one Worker invocation.
 */

/**
 * One transition; `slice` carries what the transitions of one invocation share. A promise only
 * when the transition waits for something (the model, an asynchronous tool, an approval hook):
 * see sync-or-async.ts.
 */
export function transition(
  state: RunState,
  slice: Slice,
  started = slice.now(),
): SyncOrAsync<Transition> {
  const made = phase(state, slice, started)
  return isPromise(made)
    ? made.then((t) => completed(state, t, started, slice))
    : completed(state, made, started, slice)
}

/** The transition a phase made from `state`, completed with its active time and its event. */
function completed(state: RunState, made: Transition, started: number, slice: Slice): Transition {
  const ms = Math.max(0, slice.now() - started)
  // Only active work is charged to maxSeconds; waiting for a person is not a transition. A
  // state a phase returns is new and seen by no one yet, so its time is added in place rather
  // than by another copy of the whole state (a waiting transition returns the same state).
  const next = made.state
  if (made.follows !== 'wait') next.activeMs += ms
  const event = made.event
  event.runId = state.id
  event.phase = next.phase
  event.ms = ms
  return made
}

/** The next transition must run in this same slice: it makes what this one recorded as started. */
function startedHere(follows: Follows): boolean {
  return follows === 'model_call' || follows === 'side_effect'
}

/**
 * One transition in a slice of its own, returning the next state. A transition that writes a
 * start record (of a model call or a side effect) is followed by the one it announces: only
 * this slice may make that call.
 */
export async function advance(state: RunState, deps: Deps): Promise<RunState> {
  const slice = new Slice(deps)
  let out = await transition(state, slice)
  while (startedHere(out.follows)) {
    out = await transition(out.state, slice)
  }
  return out.state
}

/**
 * The transition `state`'s phase makes. `started` is the clock read the transition began with:
 * a model call or a tool call made before anything waited starts then, rather than at a read of
 * its own (a clock read is about a fortieth of a step: docs/development.md#kernel-performance).
 */
function phase(state: RunState, slice: Slice, started: number): SyncOrAsync<Transition> {
  if (state.phase === 'done') return transitionTo(state, 'noop', {}, 'wait')
  if (state.cancelRequested || slice.deps.signal?.aborted) {
    // A model call whose answer a crash lost is counted even when it is never made again.
    const counted = countLostModelCall(state, slice)
    const cancelled = closeStartedCalls(cancelApprovals(counted, slice.now()), slice)
    return stopped(cancelled, 'cancelled', slice, cancelMessage(state, slice))
  }
  switch (state.phase) {
    case 'think':
      return think(state, slice, started)
    case 'act':
      return act(state, slice, started)
    case 'await_approval': {
      // The same state when nothing expired: the run waits for a person.
      const next = expireApprovals(state, slice.now())
      return next === state
        ? transitionTo(state, 'await', {}, 'wait')
        : transitionTo(next, 'expire')
    }
    case 'await_child':
      return awaitChildren(state, slice)
  }
}

export type SliceEnd =
  'done' | 'awaiting_approval' | 'awaiting_child' | 'max_transitions' | 'max_wall' | 'max_bytes'

export interface SliceResult {
  state: RunState
  end: SliceEnd
  transitions: number
  bytes: number
}

/**
 * Advances a run until it finishes, waits for a person, or spends the invocation's slice.
 * `persist` runs after every transition that changed the state, before the next.
 */
export async function runSlice(
  initial: RunState,
  deps: Deps,
  limits: EdgeSlice,
  persist?: (state: RunState, event: TransitionEvent, follows: Follows) => void | Promise<void>,
): Promise<SliceResult> {
  const slice = new Slice(deps)
  const sliceStarted = slice.now()
  let state = initial
  let transitions = 0
  let bytes = 0
  // When the clock was last read with nothing since but the slice's own checks: the next
  // transition starts then (a clock read costs about as much as a tenth of a step).
  let now: number | undefined = sliceStarted
  for (;;) {
    if (state.phase === 'done') return { state, end: 'done', transitions, bytes }
    // `transition`, with a phase that waited awaited here rather than chained with `then`: a
    // callback and a promise less for every model call (docs/development.md#kernel-performance).
    const started = now ?? slice.now()
    now = undefined
    const made = phase(state, slice, started)
    const out = completed(state, isPromise(made) ? await made : made, started, slice)
    transitions++
    bytes += out.event.bytes
    if (out.follows === 'wait') {
      // Nothing to do until a person decides (or an approval expires), or a child run ends.
      const end = state.phase === 'await_child' ? 'awaiting_child' : 'awaiting_approval'
      return { state, end, transitions, bytes }
    }
    state = out.state
    const persisted = persist?.(state, out.event, out.follows)
    if (persisted) await persisted
    // A started side effect or model call must run in this same invocation: stopping here would
    // make the next one see it as interrupted (an unknown outcome, a lost answer).
    if (startedHere(out.follows)) continue
    if (state.phase === 'done') return { state, end: 'done', transitions, bytes }
    if (transitions >= limits.maxTransitions) {
      return { state, end: 'max_transitions', transitions, bytes }
    }
    now = slice.now()
    if (now - sliceStarted >= limits.maxWallMs) {
      return { state, end: 'max_wall', transitions, bytes }
    }
    if (bytes >= limits.maxBytes) return { state, end: 'max_bytes', transitions, bytes }
  }
}
