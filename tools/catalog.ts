import type { Tool } from '../src/kernel/tool'
import { ConfigError } from '../src/errors/config-error'
import { readSettings, splitList, type EnvRecord } from '../src/settings/setting'
import { askPerson } from './ask-person'
import { calculator } from './calculator'
import type { CatalogEntry } from './configured-tool'
import { queryMetrics, readRepoFile, rollbackDeploy, searchLogs } from './demo'
import { httpGet } from './http-get'
import { httpPost } from './http-post'

/** Every tool a deployment can enable. Adding a tool: its file in tools/, and one line here. */
export const CATALOG: readonly CatalogEntry[] = [
  calculator,
  httpGet,
  httpPost,
  queryMetrics,
  searchLogs,
  readRepoFile,
  rollbackDeploy,
  askPerson,
]

/** Every tool name `buildToolset` knows. */
export const KNOWN_TOOLS: readonly string[] = Object.freeze(CATALOG.map((e) => e.name))

/**
 * The tools named in `enabled`, in that order (duplicates dropped), each built from the settings
 * it declares. Only enabled tools read their settings: HTTP_ALLOWLIST is required by http_get,
 * not by a deployment that does not use it. Throws a ConfigError naming the variable to fix.
 */
export function buildToolset(
  enabled: readonly string[],
  env: EnvRecord,
  catalog: readonly CatalogEntry[] = CATALOG,
): Tool[] {
  const names = [...new Set(enabled)]
  const byName = new Map(catalog.map((e) => [e.name, e]))
  const unknown = names.filter((n) => !byName.has(n))
  if (unknown.length) {
    throw new ConfigError(
      'ENABLED_TOOLS',
      `ENABLED_TOOLS names unknown tool${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; ` +
        `known: ${[...byName.keys()].join(', ')}`,
    )
  }
  return names.map((name) => build(byName.get(name)!, env))
}

function build(entry: CatalogEntry, env: EnvRecord): Tool {
  if (!('build' in entry)) return entry
  let values
  try {
    values = readSettings(env, entry.settings)
  } catch (err) {
    const e = err as ConfigError
    throw new ConfigError(e.variable, `${e.message} (needed by the enabled tool ${entry.name})`, {
      cause: err,
    })
  }
  const variables = Object.keys(entry.settings).join(', ')
  let tool: Tool
  try {
    tool = entry.build(values)
  } catch (err) {
    throw new ConfigError(variables, `${(err as Error).message} (check ${variables})`, {
      cause: err,
    })
  }
  if (tool.name !== entry.name) {
    throw new TypeError(`catalog entry "${entry.name}" built a tool named "${tool.name}"`)
  }
  return tool
}

/** A comma-separated tool list (e.g. the ENABLED_TOOLS var) as names: trimmed, empties dropped. */
export const parseToolList = splitList
