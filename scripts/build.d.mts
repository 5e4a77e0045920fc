/** Builds the console's assets. */
export function build(): Promise<{ assets: string }>
