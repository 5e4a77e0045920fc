import type { Context } from 'hono'
import { configReport, loadConfig, type EnvRecord } from '../config'
import { coalescedMcpWarnings } from '../runs/readiness-checks'
import { sessionAuthOf } from '../runs/connections/connections'
import { redact } from '../security/redact'
import type { AppEnv } from './app-env'
import { errorBody } from './api-error'
import { requireAuth } from './api/auth'

/**
 * `GET /readyz` and `GET /healthz?deep=1` (docs/operations.md#readiness). Without credentials:
 * the settings' verdict only (ready, or which variables are wrong), checked inside the Worker,
 * with no outbound request and no text a setting's value or an upstream server wrote. With a token holding
 * `service:read`: every problem and warning, the MCP servers asked (coalesced).
 */
export async function readiness(c: Context<AppEnv>) {
  if (c.req.header('Authorization') === undefined) return readinessSummary(c)
  let full: Response | undefined
  await requireAuth({ scope: () => 'service:read' })(c, async () => {
    full = await readinessReport(c)
  })
  return full!
}

function readinessSummary(c: Context<AppEnv>) {
  const { problems } = configReport(c.env as unknown as EnvRecord)
  if (!problems.length)
    return c.json({ ok: true as const, service: 'edgeloop' as const, warnings: [] })
  const count = problems.length
  const variables = [...new Set(problems.map((p) => p.variable))]
  return c.json(
    errorBody(
      'misconfigured',
      `${count} configuration problem${count > 1 ? 's' : ''} (${variables.join(', ')}); ` +
        'send a token with the scope service:read to see what is wrong',
      { problemCount: count, variables },
    ),
    503,
  )
}

/** The MCP servers asked as runs would ask them: the deployment's OAuth connections included. */
async function mcpWarnings(c: Context<AppEnv>): Promise<string[]> {
  const config = loadConfig(c.env)
  const auth = await sessionAuthOf(c.env, config.mcpServers, null)
  return coalescedMcpWarnings(String(c.env.MCP_SERVERS ?? ''), config, Date.now(), auth)
}

async function readinessReport(c: Context<AppEnv>) {
  const env = c.env as unknown as EnvRecord
  const report = configReport(env)
  const { problems } = report
  const warnings = problems.length
    ? report.warnings
    : [...report.warnings, ...(await mcpWarnings(c))]
  const clean = (text: string) => redact(text)
  if (!problems.length)
    return c.json({ ok: true, service: 'edgeloop', warnings: warnings.map(clean) })
  const body = errorBody(
    'misconfigured',
    `${problems.length} configuration problem${problems.length > 1 ? 's' : ''}: ` +
      problems.map((p) => clean(p.message)).join('; '),
    {
      problems: problems.map((p) => ({
        variable: p.variable,
        message: clean(p.message),
        ...(p.agent ? { agent: p.agent, field: p.field } : {}),
      })),
      warnings: warnings.map(clean),
    },
  )
  return c.json(body, 503)
}
