/**
 * The kernel's prompt format: how its rules and a step's observations are worded in requests. A
 * run snapshots the format when it starts (`RunState.agent.promptFormat`) and keeps it for life,
 * so a deploy that changes the wording never changes the bytes a run in flight sends (the
 * provider's prompt cache keeps working): docs/agents.md#a-deploy-never-changes-a-run-in-flight.
 *
 * - 1: runs saved by state version 3. Observations come back bare (a native tool message) or
 *   after an `Observation:` line (text), and the system prompt has no rule about tool output.
 * - 2: every observation in one `<tool_output tool="…">` frame, and the system prompt's rule
 *   about it (src/kernel/tool-output.ts).
 */
export type PromptFormat = 1 | 2

/** The format new runs start with. */
export const PROMPT_FORMAT: PromptFormat = 2

/** A run's format: runs saved before the field was snapshotted started with format 2. */
export function promptFormatOf(agent: { promptFormat?: PromptFormat | undefined }): PromptFormat {
  return agent.promptFormat ?? 2
}
