/** An error answer of the edgeloop API: its HTTP status and the stable `code` to branch on. */
export class EdgeloopError extends Error {
  override name = 'EdgeloopError'
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message)
  }
}
