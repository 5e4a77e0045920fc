export {
  createModel,
  modelConfigFromEnv,
  type ModelConfig,
  type ModelProtocolSetting,
} from './config'
export { DEMO_MODEL_NAME, DEMO_ROLLBACK_CALL_ID, demoModel, demoScript } from './demo-script'
export { OpenAIModel, type OpenAIModelOptions } from './openai-model'
export { redactSecrets } from './redact'
export { ScriptedModel, type Script, type ScriptEntry } from './scripted-model'
