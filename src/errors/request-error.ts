import { EdgeloopError } from './edgeloop-error'

/**
 * The caller's fault: a request that cannot be served as asked (bad input, missing credentials,
 * an unknown run, wrong use of the kernel). `code` is stable for programs; the message says what
 * to change; `details` carries the specifics (which fields, which limit).
 */
export class RequestError extends EdgeloopError {
  override name = 'RequestError'
  readonly details?: unknown
  constructor(
    readonly code: string,
    message: string,
    options: { details?: unknown; cause?: unknown } = {},
  ) {
    super(message, options)
    if (options.details !== undefined) this.details = options.details
  }
}
