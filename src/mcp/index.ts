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
  type McpServerConfig,
  type McpToolOverride,
} from './mcp-servers'
export { McpSessions, withMcpSessions } from './mcp-sessions'
export {
  checkAnswer,
  withDefaults,
  type McpAnswer,
  type McpAsker,
  type McpQuestion,
} from './mcp-elicitation'
