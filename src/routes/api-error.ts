import { RequestError } from '../errors/request-error'

/** The body of every error response: `{ error: { code, message, details? } }`. */
export function errorBody(
  code: string,
  message: string,
  details?: unknown,
): { error: { code: string; message: string; details?: unknown } } {
  return { error: { code, message, ...(details !== undefined ? { details } : {}) } }
}

/** A request error as HTTP answers it: a 4xx status, a stable code, a message that says what to fix. */
export class ApiError extends RequestError {
  override name = 'ApiError'
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 422 | 429,
    code: string,
    message: string,
    details?: unknown,
  ) {
    super(code, message, { details })
  }

  toJSON(): { error: { code: string; message: string; details?: unknown } } {
    return errorBody(this.code, this.message, this.details)
  }
}
