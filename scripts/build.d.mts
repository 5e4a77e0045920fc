/** Builds the console's assets. */
export function build(): Promise<{ assets: string }>
/** One line a file the build wrote under `dir`, with sizes, after a summary line. */
export function describeAssets(dir: string): string[]
