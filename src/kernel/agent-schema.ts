import * as z from 'zod/mini'
import { agentVersion } from './agent-version'
import { PROMPT_FORMAT } from './prompt-format'

/**
 * What a run copies of its agent when it starts (docs/agents.md): after that the run never reads
 * the definition again, so a deploy that edits the agent changes new runs only and a resumed run
 * sends the same prompt bytes. The tools, protocol and policy it snapshots are the run's own
 * `tools`, `protocolSetting` and `policy`; `version` is a hash over all of them.
 */
export const AgentSnapshotSchema = z.object({
  name: z.string(),
  /** A short content hash of everything the run took from its agent. */
  version: z.string(),
  /** Put first in the system prompt; null: none (the kernel's rules alone). */
  instructions: z.nullable(z.string()),
  /** JSON Schema the final answer must validate against; null: a plain text answer. */
  output: z.nullable(z.record(z.string(), z.unknown())),
  /** The agent's model; null: the deployment's (or the run's own choice). */
  model: z.nullable(z.string()),
  temperature: z.nullable(z.number()),
  /**
   * The kernel's prompt format the run started with (src/kernel/prompt-format.ts), kept for the
   * run's life. Outside the version hash: it is the kernel's, not the agent's. Absent in runs
   * saved before the field: the format of that time, 2.
   */
  promptFormat: z.optional(z.union([z.literal(1), z.literal(2)])),
})
export type AgentSnapshot = z.infer<typeof AgentSnapshotSchema>

/** What a run is started with of its agent; the kernel adds the version. */
export type AgentInput = Partial<Omit<AgentSnapshot, 'version' | 'promptFormat'>>

/** The name of a run that names no agent. */
export const DEFAULT_AGENT = 'default'

/** What the version hashes besides the agent's own fields. */
export interface RunShape {
  tools: readonly string[]
  protocol: string
  policy: unknown
}

/** The snapshot of `agent` for a run of this shape, its version computed. */
export function agentSnapshot(agent: AgentInput | undefined, run: RunShape): AgentSnapshot {
  const name = agent?.name ?? DEFAULT_AGENT
  const instructions = agent?.instructions ?? null
  const output = agent?.output ?? null
  const model = agent?.model ?? null
  const temperature = agent?.temperature ?? null
  // Literals, not spreads of one record into another: V8 builds these much faster, and every
  // run makes them (docs/development.md#kernel-performance).
  const { tools, protocol, policy } = run
  const content = { name, instructions, output, model, temperature, tools, protocol, policy }
  const version = agentVersion(content)
  return { name, instructions, output, model, temperature, version, promptFormat: PROMPT_FORMAT }
}

export { agentVersion }
