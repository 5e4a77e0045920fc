/** Errors split by whose fault they are (STYLE: openai-agents-js). */

/** The model provider could not produce an answer (after retries). Ends a run with `model_error`. */
export class ModelError extends Error {
  override name = 'ModelError'
  constructor(
    message: string,
    readonly options: {
      /** HTTP status from the provider, when there was one. */
      status?: number
      /** `tools_unsupported` lets an `auto` run fall back to the text protocol. */
      code?:
        'tools_unsupported' | 'timeout' | 'network' | 'http' | 'bad_response' | 'script_exhausted'
    } = {},
  ) {
    super(message)
  }
}

/** A caller used the kernel wrongly (bad state, unknown call id). Never caused by model output. */
export class KernelUsageError extends Error {
  override name = 'KernelUsageError'
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message)
  }
}
