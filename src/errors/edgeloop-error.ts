/**
 * The base of every error edgeloop throws on purpose. Subclasses say whose fault it is, so a
 * caller can tell what to do: fix a setting (ConfigError), fix the request (RequestError), retry
 * or change the model (ModelError), fix the tool's input (ToolError), or wait for the far end of
 * a delivery (DeliveryError). An error that wraps another passes it as `{ cause }`.
 */
export class EdgeloopError extends Error {
  override name = 'EdgeloopError'
  constructor(message: string, options?: { cause?: unknown }) {
    // No `cause` key at all when there is none: `'cause' in err` stays meaningful.
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
  }
}
