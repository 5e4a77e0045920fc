/** Bytes of source V8 compiled in a stretch of its log, by the group each range belongs to. */
export function compiledBytes(
  log: string,
  scriptNames: Map<string, string>,
  groupOf: (script: string, start: number) => string,
): { bytes: number; functions: number; groups: Map<string, number> }
/** Script ids and their names, from a V8 log's `script-details` lines. */
export function scriptNames(log: string): Map<string, string>
export function benchFirstRunCompiled(root: string): Promise<string>
