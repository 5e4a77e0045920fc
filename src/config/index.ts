export { ConfigError } from '../errors/config-error'
export { DEFAULT_TOOLS, loadConfig, type ServiceConfig } from './load-config'
export { modelConfigFromEnv } from './model'
export {
  readSetting,
  readSettings,
  type EnvRecord,
  type Setting,
  type Settings,
} from '../settings/setting'
