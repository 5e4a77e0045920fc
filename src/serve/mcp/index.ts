export { serveMcp } from './mcp-server'
export type { McpCaller } from './mcp-caller'
export { originAllowed } from './origin-check'
export { resumeCall } from './resume-call'
