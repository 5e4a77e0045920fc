import type { Tool } from '../src/kernel/tool'
import type { SettingValues, Settings } from '../src/settings/setting'

/**
 * A tool that reads settings: the variables it needs, declared with the readers of
 * `src/settings/setting.ts`, and how to build it from their values. The config loader reads and
 * checks them when the tool is enabled, and a bad or missing one is a 503 naming that variable.
 */
export interface ConfiguredTool<S extends Settings = Settings> {
  /** The tool's name, as in ENABLED_TOOLS; `build` must return a tool of this name. */
  name: string
  settings: S
  /** Builds the tool; may throw a TypeError saying which value is wrong. Called once. */
  build: (values: SettingValues<S>) => Tool
}

/** What the catalog holds: a ready tool, or one built from settings. */
export type CatalogEntry = Tool | ConfiguredTool

/** Declares a tool built from settings (see `tools/examples/ticket.ts`). */
export function defineConfiguredTool<S extends Settings>(def: ConfiguredTool<S>): ConfiguredTool {
  return def as unknown as ConfiguredTool
}

/** The settings an entry reads (none for a ready tool). */
export function settingsOf(entry: CatalogEntry): Settings {
  return 'build' in entry ? entry.settings : {}
}
