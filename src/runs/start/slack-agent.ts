import type { ServiceConfig } from '../../config'

/**
 * Which agent a Slack message asks for (docs/agents.md#slack): `<agent>: <task>` names one
 * explicitly (only when an offered agent has that name, so "note: the disk is full" stays a
 * task); otherwise a follow-up keeps its conversation's agent, and a new ask in a channel an
 * agent names in `slack.channels` goes to that agent. Nothing: the default agent.
 */
export function slackAgent(
  config: ServiceConfig,
  text: string,
  where: { channel: string; previousAgent?: string },
): { task: string; agent?: string } {
  const named = /^([a-z][a-z0-9_-]{0,39}):\s*([\s\S]+)$/.exec(text.trim())
  if (named && config.agents.some((a) => a.name === named[1])) {
    return { agent: named[1]!, task: named[2]!.trim() }
  }
  const offered = (name: string | undefined) =>
    name !== undefined && config.agents.some((a) => a.name === name)
  if (offered(where.previousAgent)) return { task: text, agent: where.previousAgent! }
  const channel = config.agents.find((a) => a.slackChannels.includes(where.channel))
  return channel ? { task: text, agent: channel.name } : { task: text }
}
