/** Identifier patterns shared by the kernel, the HTTP API and Slack: one definition each. */

/**
 * A tool name: what the model writes as the action (a letter or `_`, then letters, digits, `_`
 * and `-`, at most 64). Unicode letters are welcome in the text protocol (Chinese tool names are
 * common there); the chat-completions API takes only NATIVE_TOOL_NAME_PATTERN, checked when a run
 * that may use it is created.
 */
export const TOOL_NAME_PATTERN = /^[\p{L}_][\p{L}\p{N}_-]{0,63}$/u

/** The function names the chat-completions API accepts (it answers 400 to any other). */
export const NATIVE_TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/

/** A run id as the service mints it (`run_` and 32 hex digits); it names the Durable Object. */
export const RUN_ID_PATTERN = /^run_[0-9a-f]{32}$/
