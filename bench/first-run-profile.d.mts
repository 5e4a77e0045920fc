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
export function benchFirstRunProfile(root: string): Promise<string>
