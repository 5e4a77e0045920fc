import { EdgeloopError } from './edgeloop-error'

/**
 * The operator's fault: a bad setting, found when the configuration is loaded. The message names
 * the variable and what is allowed; routes answer it as `503 misconfigured` and runs wait until
 * it is fixed.
 */
export class ConfigError extends EdgeloopError {
  override name = 'ConfigError'
  /** The variable (or variables, comma-separated) to fix. */
  readonly variable: string

  constructor(variable: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.variable = variable
  }
}
