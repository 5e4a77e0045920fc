export { ConfigError } from '../errors/config-error'
export { DEFAULT_TOOLS, DEMO_TOOLS, loadConfig, type ServiceConfig } from './load-config'
export { overMaxima } from './budget'
export { modelConfigFromEnv } from './model'
export {
  readSetting,
  readSettings,
  type EnvRecord,
  type Setting,
  type Settings,
} from '../settings/setting'
export { DEMO_MODEL, NO_KEY } from '../llm/create-model'
export { configReport, type ConfigProblem, type ConfigReport } from './problems'
export { allToolsOf, isMcpToolName } from '../mcp/index'
export { AGENT_NAME_PATTERN, type Agent } from './agents'
export { agentTools, splitTools } from './agent-tools'
