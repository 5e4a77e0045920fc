import { EdgeloopError } from './edgeloop-error'

/**
 * A tool's fault, or its input's: the tool could not do what it was asked. Never escapes a run:
 * dispatch turns it into a `[ToolError] <tool> failed: <name>: <message>` observation, so the
 * message must tell the model what to change (which argument, where, what would work).
 */
export class ToolError extends EdgeloopError {
  override name = 'ToolError'
}
