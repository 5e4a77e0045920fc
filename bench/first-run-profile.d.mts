/** Where a bundle position came from: its source file and the function starting there. */
export interface BundlePlace {
  file: string
  fn: string
}
/** The source files and functions of the bundle on one `perf script` stack, each once. */
export function bundlePlaces(
  stack: string,
  placeOf: (line: number, column: number) => BundlePlace | undefined,
): { files: Set<string>; functions: Set<string> }
/** Maps a position of the bundle at `scriptPath` to its source, through the bundle's source map. */
export function sourcePlaces(
  root: string,
  scriptPath: string,
): (line: number, column: number) => BundlePlace | undefined
export function benchFirstRunProfile(root: string): Promise<string>
