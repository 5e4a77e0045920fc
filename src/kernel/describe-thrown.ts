/** `<Type>: <message>` for anything thrown (errors, strings, objects). */
export function describeThrown(err: unknown): string {
  if (err instanceof Error) return `${err.name || 'Error'}: ${err.message}`
  if (typeof err === 'string') return `Error: ${err}`
  try {
    return `${typeof err}: ${JSON.stringify(err)}`
  } catch {
    return `${typeof err}: ${String(err)}`
  }
}
