import { expireApprovals, pendingApprovals } from './approvals'
import { act } from './act'
import { RenderCache } from './context'
import { isThenable } from './dispatch'
import { READ_OBSERVATION, readObservationTool } from './read-observation'
import { ToolRegistry } from './registry'
import type { RunState } from './state'
import { cancelApprovals, cancelMessage, stop } from './stop'
import { think } from './think'
import type { AdvanceDeps, Deps, Result, TransitionEvent } from './transition-types'

export type { AdvanceDeps, TransitionEvent } from './transition-types'

const withBuiltins = new WeakMap<ToolRegistry, ToolRegistry>()

/** The run's registry plus the built-in `read_observation`. */
export function runRegistry(registry: ToolRegistry): ToolRegistry {
  if (registry.get(READ_OBSERVATION)) return registry
  let full = withBuiltins.get(registry)
  if (!full) {
    full = new ToolRegistry([...registry.list(), readObservationTool])
    withBuiltins.set(registry, full)
  }
  return full
}

/** Performs exactly one transition of the step machine (DESIGN §3). Never throws on model output. */
export async function advance(state: RunState, deps: AdvanceDeps): Promise<RunState> {
  return (await transition(state, deps)).state
}

/** `advance` with a description of what it did. */
export async function transition(
  state: RunState,
  deps: AdvanceDeps,
): Promise<{ state: RunState; event: TransitionEvent }> {
  return transitionWith(state, cachedDeps(deps))
}

type Transitioned = { state: RunState; event: TransitionEvent }

/**
 * One transition with deps already completed by `prepareDeps`, without a promise when the
 * transition is synchronous (running a synchronous tool): runSlice's hot path.
 */
export function transitionWith(state: RunState, deps: Deps): Transitioned | Promise<Transitioned> {
  const started = deps.now()
  const result = step(state, deps)
  if (isThenable(result)) return result.then((r) => finish(state, r, deps.now() - started))
  return finish(state, result, deps.now() - started)
}

/** Adds run id, phase and time to the transition's own event (a literal each transition makes). */
function finish(state: RunState, result: Result, elapsed: number): Transitioned {
  const ms = Math.max(0, elapsed)
  // A changed state is always a fresh object made by this transition, so it may be finished in
  // place. Only active work is charged to maxSeconds; waiting for a person is not a transition.
  if (result.state !== state) result.state.activeMs += ms
  const event = result.event as TransitionEvent
  event.runId = state.id
  event.phase = result.state.phase
  event.ms = ms
  return result as Transitioned
}

/**
 * Deps with defaults applied and a fresh render cache. A caller that runs many transitions
 * (runSlice) makes this once and passes it to `transitionWith`.
 */
export function prepareDeps(deps: AdvanceDeps): Deps {
  const full: Deps = {
    model: deps.model,
    registry: runRegistry(deps.registry),
    observations: deps.observations,
    now: deps.now ?? Date.now,
    render: new RenderCache(),
  }
  if (deps.confirm) full.confirm = deps.confirm
  if (deps.signal) full.signal = deps.signal
  if (deps.pricing) full.pricing = deps.pricing
  return full
}

// `advance` and `transition` called one by one with the same deps share one prepared copy.
const depsCache = new WeakMap<AdvanceDeps, Deps>()
function cachedDeps(deps: AdvanceDeps): Deps {
  let full = depsCache.get(deps)
  if (!full) depsCache.set(deps, (full = prepareDeps(deps)))
  return full
}

// Not `async`: most transitions finish synchronously, and each async layer costs a promise.
function step(state: RunState, deps: Deps): Result | Promise<Result> {
  if (state.phase === 'done') return { state, event: { action: 'noop', bytes: 0 } }
  if (state.cancelRequested || deps.signal?.aborted)
    return stop(cancelApprovals(state, deps.now()), 'cancelled', deps, cancelMessage(state, deps))
  switch (state.phase) {
    case 'think':
      return think(state, deps)
    case 'act':
      return act(state, deps)
    case 'await_approval': {
      const next = expireApprovals(state, deps.now())
      return { state: next, event: { action: next === state ? 'await' : 'expire', bytes: 0 } }
    }
  }
}

export { pendingApprovals }
