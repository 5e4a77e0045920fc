/** Identifier patterns shared by the kernel, the HTTP API and Slack: one definition each. */

/** A tool name: what the model writes as the action (letters, digits, `_` and `-`, at most 64). */
export const TOOL_NAME_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/

/** A run id as the service mints it (`run_` and 32 hex digits); it names the Durable Object. */
export const RUN_ID_PATTERN = /^run_[0-9a-f]{32}$/
