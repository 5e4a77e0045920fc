import { dispatch, type DispatchContext } from '../../src/kernel/dispatch'
import { ToolRegistry } from '../../src/kernel/registry'
import type { Tool } from '../../src/kernel/tool'

/** A dispatch context over `tools` with a Map-backed observation store, policy `allow`. */
export function contextFor(
  tools: Iterable<Tool>,
  overrides: Partial<DispatchContext> = {},
): DispatchContext {
  const stored = new Map<string, string>()
  return {
    registry: new ToolRegistry(tools),
    runId: 'r1',
    observations: {
      put: (handle, text) => void stored.set(handle, text),
      get: (h) => stored.get(h),
    },
    policy: { mode: 'allow' },
    ...overrides,
  }
}

/** Dispatches one call, as the step machine would, and returns the observation. */
export function call(
  ctx: DispatchContext,
  name: string,
  args: Record<string, unknown>,
  id = 'call_1',
): Promise<string> {
  return Promise.resolve(dispatch({ id, name, args }, ctx)).then((r) => r.observation)
}
