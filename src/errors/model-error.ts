import { EdgeloopError } from './edgeloop-error'

/** Why a model call failed; `tools_unsupported` lets an `auto` run fall back to the text protocol. */
export type ModelErrorCode =
  | 'tools_unsupported'
  | 'timeout'
  | 'network'
  | 'http'
  | 'bad_response'
  | 'script_exhausted'
  | 'script_invalid'

/**
 * The model provider's fault: it could not produce an answer (after retries). Ends a run with
 * `model_error`; the message names the model and what to do (raise a budget, check the URL).
 */
export class ModelError extends EdgeloopError {
  override name = 'ModelError'
  readonly options: {
    /** HTTP status from the provider, when there was one. */
    status?: number
    code?: ModelErrorCode
  }
  constructor(
    message: string,
    { cause, ...options }: { status?: number; code?: ModelErrorCode; cause?: unknown } = {},
  ) {
    super(message, { cause })
    this.options = options
  }
}
