import { cloudflareTest } from '@cloudflare/vitest-plugin'
import { defineConfig } from 'vitest/config'
import { wranglerConfigWithoutDevVars } from './scripts/test-wrangler-config.mjs'

const wrangler = { configPath: wranglerConfigWithoutDevVars() }

// Settings every test Worker gets. Hosts use the reserved .test TLD: the strict outbound fake
// (test/fakes/outbound.ts) answers them, and nothing can reach a real host.
const common = {
  API_TOKEN: 'test-token',
  WEBHOOK_SECRET: 'test-webhook-secret',
  CONFIRM_POLICY: 'ask',
  ENABLED_TOOLS:
    'calculator,http_get,http_post,query_metrics,search_logs,read_repo_file,rollback_deploy',
  HTTP_ALLOWLIST: 'api.allowed.test,receiver.test',
  // The fake receiver deduplicates by Idempotency-Key, so http_post may be retried after a crash.
  HTTP_POST_IDEMPOTENT: 'true',
  SLACK_SIGNING_SECRET: 'test-signing-secret',
  SLACK_BOT_TOKEN: 'xoxb-test-token',
  SLACK_API_URL: 'https://slack.test/api',
  SLACK_APPROVERS: 'UAPPROVER1,UAPPROVER2',
  MODEL: 'gpt-test',
  MODEL_ALLOWLIST: 'gpt-test,gpt-test-large',
  // Quiet output: no JSON log lines (test/service/harness.ts turns them on and captures them).
  LOG_LEVEL: 'silent',
}
const fakeProvider = {
  OPENAI_API_KEY: 'sk-test-fake-openai-0123456789',
  OPENAI_BASE_URL: 'https://api.openai.test/v1',
}

export default defineConfig({
  test: {
    // The first request of a file loads the whole Worker into workerd: allow for a cold start.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        // The service wired to a fake OpenAI-compatible provider.
        plugins: [
          cloudflareTest({
            wrangler,
            miniflare: {
              bindings: { ...common, ...fakeProvider },
            },
          }),
        ],
        test: {
          testTimeout: 30_000,
          name: 'edgeloop',
          include: ['test/**/*.test.ts'],
          exclude: ['test/demo/**', 'test/node/**'],
        },
      },
      {
        // No API key: the offline scripted demo, exactly as `npm start` runs it.
        plugins: [
          cloudflareTest({
            wrangler,
            // OPENAI_API_KEY empty: the offline demo model.
            miniflare: { bindings: { ...common, OPENAI_API_KEY: '' } },
          }),
        ],
        test: { testTimeout: 30_000, name: 'offline-demo', include: ['test/demo/**/*.test.ts'] },
      },
      {
        // Plain Node: the real Worker under Miniflare's API, killed and restarted (test/node/).
        test: {
          name: 'node',
          environment: 'node',
          include: ['test/node/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
})
