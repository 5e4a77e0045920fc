/** wrangler.toml's `[assets] directory`. */
export const ASSETS_DIR: string
/** Each file under ASSETS_DIR and the export of src/console/ it holds: [module, export]. */
export const CONSOLE_FILES: Record<string, [string, string]>
/** Writes the console's files under ASSETS_DIR; resolves to the directory. */
export function buildConsoleAssets(): Promise<string>
