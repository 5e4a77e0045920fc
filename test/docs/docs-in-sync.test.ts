import { describe, expect, it } from 'vitest'
import readme from '../../README.md?raw'
import configurationPage from '../../docs/configuration.md?raw'
import toolsPage from '../../docs/tools.md?raw'
import wranglerToml from '../../wrangler.toml?raw'
import { CATALOG } from '../../tools/index'
import { settingsOf } from '../../tools/configured-tool'
import { ticket } from '../../tools/examples/ticket'
import { DEFAULT_TOOLS } from '../../src/config'
import type { Env } from '../../src/env'

/**
 * docs/tools.md walks through the worked example by linking its files rather than quoting them
 * (test/node/docs-links.test.ts checks that every link reaches a file); what the page says about
 * the example must still be the example's.
 */
describe('docs/tools.md "Adding a tool"', () => {
  it.each(['tools/examples/ticket.ts', 'test/tools/ticket.test.ts'])('links %s', (path) => {
    expect(toolsPage).toContain(`](../${path})`)
  })

  it.each([ticket.name, ...Object.keys(settingsOf(ticket))])(
    'names %s as the example does',
    (name) => {
      expect(toolsPage).toContain(`\`${name}\``)
    },
  )
})

describe('docs/configuration.md and docs/tools.md', () => {
  const ENV_NAMES: (keyof Env)[] = [
    'API_TOKEN',
    'API_TOKENS',
    'API_APPROVES_SLACK_RUNS',
    'WEBHOOK_SECRET',
    'OPENAI_API_KEY',
    'SLACK_SIGNING_SECRET',
    'SLACK_BOT_TOKEN',
    'OPENAI_BASE_URL',
    'MODEL',
    'MODEL_TEMPERATURE',
    'MODEL_MAX_TOKENS',
    'MODEL_ALLOWLIST',
    'MODEL_PROTOCOL',
    'MODEL_MAX_RETRIES',
    'MODEL_STREAM',
    'PRICE_PROMPT_PER_1K_USD',
    'PRICE_COMPLETION_PER_1K_USD',
    'CONFIRM_POLICY',
    'CONFIRM_ALLOWLIST',
    'ENABLED_TOOLS',
    'HTTP_ALLOWLIST',
    'MAX_STEPS',
    'MAX_SECONDS',
    'MAX_PROMPT_TOKENS',
    'MAX_COST_USD',
    'APPROVAL_TTL_SECONDS',
    'CPU_MS',
    'CALLBACK_ALLOWLIST',
    'HTTP_POST_IDEMPOTENT',
    'MCP_SERVERS',
    'MCP_CLIENT_METADATA_URL',
    'SLACK_API_URL',
    'SLACK_APPROVERS',
    'SLACK_FORBID_SELF_APPROVAL',
    'SLACK_DM_CONVERSATION_MINUTES',
    'LOG_LEVEL',
    'MAX_CONTEXT_TOKENS',
    'MAX_PARALLEL_CALLS',
    'MAX_HISTORY_TOKENS',
    'PRICE_CACHED_PROMPT_PER_1K_USD',
    'RUN_RETENTION_DAYS',
    'EVENT_STREAMS_PER_RUN',
    'EVENT_STREAMS_PER_TOKEN',
    'EVENT_STREAM_QUEUE_KB',
    'RUN_LIST_STREAMS',
    'MCP_WAIT_SECONDS',
    'MCP_ALLOWED_ORIGINS',
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    'OTEL_EXPORTER_OTLP_HEADERS',
    'OTEL_SERVICE_NAME',
    'OTEL_CAPTURE_CONTENT',
  ]
  it.each(ENV_NAMES)('documents %s', (name) => {
    expect(configurationPage).toContain(`\`${name}\``)
  })

  // The tools edgeloop ships; a tool you add is documented where you deploy it.
  const SHIPPED = [
    'calculator',
    'http_get',
    'http_post',
    'query_metrics',
    'search_logs',
    'read_repo_file',
    'rollback_deploy',
  ]
  it.each(SHIPPED)('lists the tool %s', (tool) => {
    expect(toolsPage).toContain(`\`${tool}\``)
  })

  const shippedSettings = CATALOG.filter((e) => SHIPPED.includes(e.name)).flatMap((e) =>
    Object.keys(settingsOf(e)),
  )
  it.each([...new Set(shippedSettings)])('documents the tool setting %s', (name) => {
    expect(configurationPage).toContain(`\`${name}\``)
  })
})

describe('README', () => {
  it('has the two commands', () => {
    expect(readme).toContain('npm ci && npm start')
    expect(readme).toContain('npm ci && npm test')
  })

  // The front door: what edgeloop is, the commands, the demo; the rest lives in docs/.
  it('stays short (under 300 lines)', () => {
    expect(readme.split('\n').length).toBeLessThan(300)
  })
})

describe('wrangler.toml', () => {
  it('keeps CPU_MS equal to [limits] cpu_ms (the Worker cannot read [limits])', () => {
    const limit = /\[limits\][^[]*?cpu_ms\s*=\s*(\d+)/.exec(wranglerToml)?.[1]
    const mirrored = /CPU_MS\s*=\s*"(\d+)"/.exec(wranglerToml)?.[1]
    expect(limit).toBeDefined()
    expect(mirrored).toBe(limit)
  })

  it('enables by default only tools that need no other setting', () => {
    // Unset, so the default follows MODEL: the demo tools only with MODEL=demo, never by accident.
    expect(wranglerToml).not.toMatch(/^ENABLED_TOOLS\s*=/m)
    expect(DEFAULT_TOOLS).toEqual(['calculator'])
  })
})
