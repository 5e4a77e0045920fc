export {
  allToolsOf,
  freezeMcpTools,
  frozenToolNames,
  isMcpToolName,
  mcpTools,
  type FrozenMcpServer,
} from './mcp-toolset'
export { mcpToolPolicy, renderMcpResult } from './mcp-tool'
export {
  MCP_SERVERS,
  readMcpServers,
  type McpConnectionOwner,
  type McpServerAuth,
  type McpServerConfig,
  type McpToolOverride,
} from './mcp-servers'
export { McpSessions, withMcpSessions } from './mcp-sessions'
export { HeldMcpCalls } from './mcp-held-calls'
export {
  checkAnswer,
  formAnswerProblems,
  withDefaults,
  type McpAnswer,
  type McpAsker,
  type McpQuestion,
} from './mcp-elicitation'
export { connectionOwner, type McpSessionAuth } from './mcp-session'
export {
  McpAccessRefused,
  McpConnectionNeeded,
  McpOAuthError,
  type ConnectionNeededReason,
} from './oauth/connection-needed'
export {
  CLIENT_METADATA_PATH,
  clientMetadataDocument,
  McpOAuthProvider,
  OAUTH_CALLBACK_PATH,
  type McpOAuthContext,
  type McpOAuthFlow,
} from './oauth/mcp-oauth-provider'
export { oauthFetch } from './oauth/oauth-fetch'
export type { OAuthClient, OAuthRecords, StoredConnection } from './oauth/oauth-records'
export { checkMcpOAuthSettings, clientMetadataUrlOf, publicUrlOf } from './mcp-oauth-settings'
export {
  beginMcpAuthorization,
  finishMcpAuthorization,
  revokeMcpTokens,
  type BegunAuthorization,
} from './oauth/mcp-authorize'
