import { delegateToolName } from '../kernel/delegation'
import { allToolsOf } from '../mcp/index'
import type { Agent } from './agents'
import type { ServiceConfig } from './load-config'

/**
 * An agent's own tools as a run gets them: its list (none: every enabled tool and every MCP
 * server's), then one `ask_<name>` per delegate; `builtIn` tells the enabled and delegate tools
 * from MCP names (whose lists are fetched when the run starts).
 */
export function agentTools(
  config: Pick<ServiceConfig, 'enabledTools' | 'mcpServers'>,
  agent: Pick<Agent, 'tools' | 'delegates'>,
): { own: string[]; builtIn: (name: string) => boolean } {
  const asks = agent.delegates.map(delegateToolName)
  const own = [
    ...(agent.tools ?? [
      ...config.enabledTools,
      ...config.mcpServers.map((s) => allToolsOf(s.name)),
    ]),
    ...asks,
  ]
  const builtIn = (t: string) => config.enabledTools.includes(t) || asks.includes(t)
  return { own, builtIn }
}

/** `names` split into the run's enabled (and delegate) tools and its MCP tools. */
export function splitTools(
  names: readonly string[],
  builtIn: (name: string) => boolean,
): { tools: string[]; mcpTools: string[] } {
  return { tools: names.filter(builtIn), mcpTools: names.filter((t) => !builtIn(t)) }
}
