/** The module wrangler.toml's `[alias]` and vitest.config.ts point `openai` at. */
export const SLIM_OPENAI: string
/** Writes SLIM_OPENAI unless it is current; resolves to its path. */
export function buildSlimOpenAI(): Promise<string>
/** Whether a module of the package (its path inside it, `/`-separated) is replaced. */
export function isLeftOut(path: string): boolean
