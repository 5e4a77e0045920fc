/** Tools and dependencies the kernel tests build the same way: recording tools, slice deps. */
import * as z from 'zod/mini'
import type * as zc from 'zod/v4/core'
import {
  defineTool,
  MemoryObservationStore,
  ToolRegistry,
  type Deps,
  type Model,
  type ParamsSchema,
  type Tool,
  type ToolDefinition,
} from '../../src/kernel/index'

/** The calls a test's tools received, in order. */
export type Ran = { name: string; args: unknown; callId: string }[]

/** Slice limits that never end a slice early: it runs until the run waits or is done. */
export const UNLIMITED = { maxTransitions: Infinity, maxWallMs: Infinity, maxBytes: Infinity }

/** `defineTool` whose handler records each call (name, args, call id) in `ran`, then answers. */
export function recordingTool<P extends ParamsSchema>(
  ran: Ran,
  def: Omit<ToolDefinition<P>, 'handler'> & { answer: (args: zc.output<P>) => string },
): Tool<P> {
  const { answer, ...rest } = def
  return defineTool<P>({
    ...rest,
    handler: (args, ctx) => {
      ran.push({ name: def.name, args, callId: ctx.callId })
      return answer(args)
    },
  })
}

/** The side-effect `deploy({ service })` tool, recorded in `ran`; answers `deployed <service>`. */
export function deployTool(
  ran: Ran,
  answer = (args: { service: string }) => `deployed ${args.service}`,
) {
  return recordingTool(ran, {
    name: 'deploy',
    description: 'Deploy a service.',
    params: z.object({ service: z.string() }),
    returns: 'Deployment id.',
    sideEffect: true,
    answer,
  })
}

/** What `runSlice` needs: the model, a registry of `tools`, an in-memory store and the clock. */
export function sliceDeps(model: Model, tools: Tool[], now: () => number): Deps {
  return {
    model,
    registry: new ToolRegistry(tools),
    observations: new MemoryObservationStore(),
    now,
  }
}
