import { RequestError } from './request-error'

/**
 * The kernel's caller's fault: it used the kernel wrongly (a state in the wrong phase, an unknown
 * call id). Never caused by model output, which becomes observations instead.
 */
export class KernelUsageError extends RequestError {
  override name = 'KernelUsageError'
  constructor(message: string, code: string, options: { cause?: unknown } = {}) {
    super(code, message, options)
  }
}
