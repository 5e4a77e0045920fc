/**
 * The vars and secrets of the Worker, as strings, before config parsing. Every one is documented
 * in docs/configuration.md. Kept apart from `Env` (which names the RunStore class) so that the
 * config and the Durable Object can read settings without an import cycle through `runs/`.
 */
export interface EnvVars {
  // Secrets (wrangler secret put / .dev.vars)
  API_TOKEN?: string
  API_TOKENS?: string
  WEBHOOK_SECRET?: string
  OPENAI_API_KEY?: string
  SLACK_SIGNING_SECRET?: string
  SLACK_BOT_TOKEN?: string
  /** AES-256 key (base64 of 32 bytes) sealing MCP connections' OAuth tokens at rest. */
  MCP_TOKEN_KEY?: string
  /** The key before the last rotation: still opens what it sealed (docs/mcp.md). */
  MCP_TOKEN_KEY_PREVIOUS?: string
  /** Signs /mcp's session and event ids (else MCP_TOKEN_KEY does; docs/serving.md). */
  MCP_SESSION_SECRET?: string
  // Vars (wrangler.toml [vars])
  OPENAI_BASE_URL?: string
  MODEL?: string
  MODEL_TEMPERATURE?: string
  MODEL_MAX_TOKENS?: string
  MODEL_ALLOWLIST?: string
  MODEL_PROTOCOL?: string
  MODEL_MAX_RETRIES?: string
  MODEL_STREAM?: string
  PRICE_PROMPT_PER_1K_USD?: string
  PRICE_COMPLETION_PER_1K_USD?: string
  CONFIRM_POLICY?: string
  CONFIRM_ALLOWLIST?: string
  ENABLED_TOOLS?: string
  ENABLED_AGENTS?: string
  HTTP_ALLOWLIST?: string
  HTTP_POST_IDEMPOTENT?: string
  /** JSON array of MCP servers; each may name a secret (token_secret) read by that name. */
  MCP_SERVERS?: string
  /** The Worker's public https origin: the OAuth callback and client metadata URLs. */
  PUBLIC_URL?: string
  /** Where edgeloop's OAuth client ID metadata document is published, when not PUBLIC_URL's. */
  MCP_CLIENT_METADATA_URL?: string
  MAX_STEPS?: string
  MAX_SECONDS?: string
  MAX_PROMPT_TOKENS?: string
  MAX_COST_USD?: string
  APPROVAL_TTL_SECONDS?: string
  CPU_MS?: string
  CALLBACK_ALLOWLIST?: string
  SLACK_API_URL?: string
  SLACK_APPROVERS?: string
  SLACK_FORBID_SELF_APPROVAL?: string
  SLACK_DM_CONVERSATION_MINUTES?: string
  SLACK_STREAM?: string
  SLACK_ASSISTANT?: string
  SLACK_APPROVALS_CHANNEL?: string
  LOG_LEVEL?: string
  MAX_CONTEXT_TOKENS?: string
  MAX_PARALLEL_CALLS?: string
  MAX_HISTORY_TOKENS?: string
  MAX_DELEGATION_DEPTH?: string
  PRICE_CACHED_PROMPT_PER_1K_USD?: string
  API_APPROVES_SLACK_RUNS?: string
  EVENT_STREAMS_PER_RUN?: string
  EVENT_STREAMS_PER_TOKEN?: string
  SERVED_CALLS_PER_TOKEN?: string
  /** How long a tools/call on /mcp without a task waits for its run (docs/serving.md). */
  MCP_WAIT_SECONDS?: string
  /** Browser origins that may call /mcp beside PUBLIC_URL's (docs/serving.md). */
  MCP_ALLOWED_ORIGINS?: string
  /** How long an /mcp session id is honoured after its initialize (docs/serving.md). */
  MCP_SESSION_TTL_SECONDS?: string
  EVENT_STREAM_QUEUE_KB?: string
  RUN_LIST_STREAMS?: string
  /** Where run traces go (OpenTelemetry OTLP/HTTP JSON); the headers are a secret. */
  OTEL_EXPORTER_OTLP_ENDPOINT?: string
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string
  OTEL_EXPORTER_OTLP_HEADERS?: string
  OTEL_SERVICE_NAME?: string
  OTEL_CAPTURE_CONTENT?: string
  /** Days a finished run is kept; unset keeps runs forever. */
  RUN_RETENTION_DAYS?: string
}
