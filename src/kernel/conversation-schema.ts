import * as z from 'zod/mini'
import { STOP_REASONS } from './budget'

/**
 * The persisted shape of a conversation (docs/architecture.md#conversations): what a run that
 * continues an earlier one carries in its state. A leaf, so `state.ts` can hold it and
 * `conversation.ts` (which reads states) can build it without an import cycle.
 */

/** One earlier run as the model sees it: rendered once, when the follow-up is created. */
export const TurnSchema = z.object({
  runId: z.string(),
  /** The run's place in the conversation (0 for the run that started it). */
  position: z.number(),
  ok: z.boolean(),
  stopReason: z.enum(STOP_REASONS),
  /** The turn as the history message shows it: task, tools called, answer or failure. */
  text: z.string(),
  /** Estimated tokens of `text`. */
  tokens: z.number(),
})
export type Turn = z.infer<typeof TurnSchema>

export const ConversationSchema = z.object({
  /** The id of the run that started the conversation. */
  id: z.string(),
  /** This run's place: 1 for the first follow-up. */
  position: z.number(),
  /** The earlier runs of the conversation, oldest first (the last is the run continued). */
  earlierRuns: z.array(z.string()),
  /** The earlier turns this run's history shows, oldest first (the newest that fit). */
  turns: z.array(TurnSchema),
  /** Earlier turns left out to fit `maxHistoryTokens` (the oldest; once dropped, always). */
  droppedTurns: z.number(),
  /**
   * The history message exactly as every request of this run sends it (after the system prompt,
   * before the task): frozen at creation, so the prompt's prefix is byte-identical from step to
   * step and across resumes and deploys.
   */
  prompt: z.string(),
  /** Estimated tokens of `prompt` (at most the run's `maxHistoryTokens`). */
  tokens: z.number(),
})
export type Conversation = z.infer<typeof ConversationSchema>

/** Where a run stands in its conversation, as its trace and the API show it. */
export const ConversationViewSchema = z.object({
  /** The id of the run that started the conversation (this run's own id if it started one). */
  id: z.string(),
  /** 0 for the run that started it, 1 for the first follow-up, … */
  position: z.number(),
  /** The run this one continued, or null. */
  previousRunId: z.nullable(z.string()),
  /** Earlier turns this run's requests show, and those left out to fit maxHistoryTokens. */
  historyTurns: z.number(),
  droppedTurns: z.number(),
})
export type ConversationView = z.infer<typeof ConversationViewSchema>
