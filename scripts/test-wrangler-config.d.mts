/** wrangler.toml copied where no `.dev.vars` lies beside it; returns the copy's path. */
export function wranglerConfigWithoutDevVars(): string
