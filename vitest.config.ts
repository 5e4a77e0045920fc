import { cloudflareTest } from '@cloudflare/vitest-plugin'
import { generateKeyPairSync } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig, type Plugin, type TestProjectInlineConfiguration } from 'vitest/config'
import { build } from './scripts/build.mjs'
import { wranglerConfigWithoutDevVars } from './scripts/test-wrangler-config.mjs'

const ROOT = dirname(fileURLToPath(import.meta.url))
const wrangler = { configPath: wranglerConfigWithoutDevVars() }

// The MCP SDK ships source maps that name sources it does not ship, and Vite warns about each
// file; loading its files without their maps keeps `npm test` quiet (stack traces still work).
const sdkWithoutSourceMaps: Plugin = {
  name: 'mcp-sdk-without-source-maps',
  enforce: 'pre',
  async load(id) {
    // Without its query: the dependency optimizer (PREBUNDLED) versions the others' ids (`?v=…`).
    const file = id.split('?')[0]!
    if (!/node_modules\/@modelcontextprotocol\/sdk\/.*\.js$/.test(file)) return null
    const code = await readFile(file, 'utf8')
    return { code: code.replace(/\n\/\/# sourceMappingURL=.*$/, ''), map: null }
  },
}

// The console's files, which [assets] serves (docs/development.md#the-build): the vitest plugin
// does not run wrangler.toml's [build], so the build runs here.
await build()

// The `agent-catalog` project's Worker is built with test/agent-catalog/test-agents.ts appended to
// agents/catalog.ts: the shipped agents plus test agents (Slack channels, side effects), made with
// the real defineAgent and checked by the real loader (docs/agents.md#slack). Appending, rather
// than resolving the catalog's import to a test catalog that imports the shipped one, keeps the
// module graph free of a cycle through the catalog.
const SHIPPED_CATALOG = join(ROOT, 'agents', 'catalog.ts')
const TEST_AGENTS = join(ROOT, 'test', 'agent-catalog', 'test-agents.ts')
const testAgentCatalog: Plugin = {
  name: 'test-agent-catalog',
  enforce: 'pre',
  transform(code, id) {
    if (id.split('?')[0] !== SHIPPED_CATALOG) return null
    const renamed = code.replace('export const AGENT_CATALOG', 'const SHIPPED_AGENTS')
    if (renamed === code) throw new Error(`${SHIPPED_CATALOG} no longer exports AGENT_CATALOG`)
    return (
      `import { TEST_AGENTS } from ${JSON.stringify(TEST_AGENTS)}\n${renamed}\n` +
      'export const AGENT_CATALOG = [...SHIPPED_AGENTS, ...TEST_AGENTS]\n'
    )
  },
}

// The private-key JWT client of the mcp-oauth project: an ES256 key pair made per test run.
const KEYED = (() => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  return {
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicJwk: JSON.stringify(publicKey.export({ format: 'jwk' })),
  }
})()

// Settings every test Worker gets. Hosts use the reserved .test TLD: the strict outbound fake
// (test/fakes/outbound.ts) answers them, and nothing can reach a real host.
const common = {
  API_TOKEN: 'test-token',
  // Named tokens: SHA-256 of test-reader-token, test-starter-token, test-approver-token,
  // test-alpha-token and test-beta-token, as `printf %s "$TOKEN" | sha256sum` prints them.
  // alpha and beta hold every scope but reach only their own runs.
  API_TOKENS: JSON.stringify([
    {
      name: 'reader',
      sha256: '0b2e8ed1ad9b540959ccfa412a59dbc86cf6a4874072936c2233bda4ced1e1c6',
      scopes: ['runs:read'],
    },
    {
      name: 'starter',
      sha256: '4ffedf3172961c9d899956463c776d784322cb87bb88f53750f7345ec024c342',
      scopes: ['runs:write', 'runs:read'],
    },
    {
      name: 'approver',
      sha256: '408a4e2c74dec2e9f99685ad6963e20118c9e5b9fecef9b857b4bcc1fedad0c6',
      scopes: ['runs:read', 'approvals:write'],
    },
    ...['alpha', 'beta'].map((name, i) => ({
      name,
      sha256: [
        '68c914915483f818ae84a9b60302b789d9223e5ae75c6e4f7d9b5059cc0ffcdb',
        '8f2efc88d84bbf42a866eeb2606fa6092ceec165f7aaa614dd2e52e2ddcdd23d',
      ][i],
      scopes: ['runs:write', 'runs:read', 'approvals:write', 'runs:delete'],
      runs: 'own',
    })),
  ]),
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

// The packages of the Worker's with the most files (openai 154, zod 116 across its entry points,
// jose 46, zod-to-json-schema 39: 421 of the 762 modules a workerd loaded), bundled by Vite's
// dependency optimizer (once per project, about half a second) into a few modules each, instead
// of transformed and fetched file by file in every workerd a project starts. Every import of them, from src/ and test/ as from
// other packages, gets the one bundled copy. Measured with fresh caches: the edgeloop project
// 83.2 s and 80.6 s without, 70.7 s and 60.1 s with (interleaved, load 2.5 to 3.8; more in
// docs/development.md#tests-benchmarks-ci).
const PREBUNDLED = [
  'openai',
  'zod',
  'zod/mini',
  'zod/v3',
  'zod/v4',
  'zod/v4-mini',
  'zod/v4/core',
  'jose',
  'zod-to-json-schema',
]

/**
 * A project whose tests run in workerd (the vitest plugin) against the Worker with `bindings`;
 * its files are test/<name>/ unless `include` says otherwise. `plugins` run before the plugin's.
 *
 * `isolate: false` unless `isolate` says otherwise: each of the project's workers (a workerd of
 * its own) runs file after file, instead of starting a new workerd and importing the Worker anew
 * for every file (figures in docs/development.md#tests-benchmarks-ci). Files therefore share
 * Durable Object storage, the run index and module state: a test reads only the runs it started,
 * and puts back what it replaces (mocks, `env`, the clock).
 */
function workerProject(
  name: string,
  bindings: Record<string, string>,
  options: {
    include?: string[]
    exclude?: string[]
    plugins?: Plugin[]
    isolate?: boolean
    verbose?: boolean
  } = {},
): TestProjectInlineConfiguration {
  const {
    include = [`test/${name}/**/*.test.ts`],
    exclude,
    plugins = [],
    isolate = false,
    verbose,
  } = options
  return {
    plugins: [
      sdkWithoutSourceMaps,
      ...plugins,
      cloudflareTest({
        wrangler,
        miniflare: { bindings },
        ...(verbose === undefined ? {} : { verbose }),
      }),
    ],
    test: {
      testTimeout: 30_000,
      name,
      include,
      ...(exclude ? { exclude } : {}),
      isolate,
      deps: { optimizer: { ssr: { enabled: true, include: PREBUNDLED } } },
    },
  }
}

// Files of the edgeloop project's settings that need a workerd of their own: what they test
// happens once per isolate, on a database no other file has touched.
const FRESH_ISOLATE_FILES = [
  'test/events/index-schema.test.ts',
  'test/events/index-schema-new.test.ts',
  'test/events/index-schema-column.test.ts',
]

// Files of test/node/ that run alone (the node-alone project below): each runs several Workers
// side by side itself (a crash point, a conformance scenario each), and times what they do.
const NODE_ALONE_FILES = [
  'test/node/crash.test.ts',
  'test/node/delegation-crash.test.ts',
  'test/node/mcp-conformance.test.ts',
]

export default defineConfig({
  test: {
    // Two test files at a time, also on a 2-core machine (vitest's default there is one): a file
    // of a workerd project waits on its workerd much of its time. The two files running at once
    // never share state: each worker has a workerd of its own (see workerProject for what the
    // files one worker runs in turn share; docs/development.md#tests-benchmarks-ci has figures).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // The first request of a file loads the whole Worker into workerd: allow for a cold start.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The OAuth provider says once per Worker load that Client ID Metadata Documents are off; they
    // are, on purpose (docs/decisions.md#oauth-for-served-agents). Every other line is kept.
    onConsoleLog: (log) => !log.startsWith('CIMD (Client ID Metadata Document) is disabled'),
    projects: [
      // The service wired to a fake OpenAI-compatible provider.
      workerProject(
        'edgeloop',
        { ...common, ...fakeProvider },
        {
          include: ['test/**/*.test.ts'],
          exclude: [
            'test/demo/**',
            'test/node/**',
            'test/mcp/**',
            'test/mcp-oauth/**',
            'test/script/**',
            'test/slack-streaming/**',
            'test/agent-catalog/**',
            'test/hitl/**',
            'test/serve-a2a/**',
            'test/serve-oauth/**',
            'test/model-unreachable/**',
            ...FRESH_ISOLATE_FILES,
          ],
        },
      ),
      // The same service, each file in a workerd of its own.
      workerProject(
        'edgeloop-fresh',
        { ...common, ...fakeProvider },
        { include: FRESH_ISOLATE_FILES, isolate: true },
      ),
      // Slack answer streaming on, and an app configured as an assistant app (thread statuses).
      workerProject('slack-streaming', {
        ...common,
        ...fakeProvider,
        SLACK_STREAM: 'auto',
        SLACK_ASSISTANT: 'true',
      }),
      // The Worker built with test agents (testAgentCatalog above); the two that break the
      // channel rules are in the catalog but not offered unless a test enables them.
      workerProject(
        'agent-catalog',
        {
          ...common,
          ...fakeProvider,
          ENABLED_AGENTS: 'triage,incident,ticket,guarded,scoped,reviewed,careful',
        },
        { plugins: [testAgentCatalog] },
      ),
      // A person in the loop (docs/human-in-the-loop.md): ask_person enabled beside http_post.
      workerProject('hitl', {
        ...common,
        ...fakeProvider,
        ENABLED_TOOLS: 'calculator,http_post,ask_person',
      }),
      // MCP servers as tool sources: a real SDK server (test/fakes/fake-mcp.ts) on mcp.test,
      // and one that is down. Each file in a workerd of its own: /readyz reuses an isolate's
      // MCP check for 10 s of the clock (src/runs/readiness-checks.ts), and the files that read
      // it each expect a check of their own against their own fake server.
      workerProject(
        'mcp',
        {
          ...common,
          ...fakeProvider,
          MCP_SERVERS: JSON.stringify([
            {
              name: 'docs',
              url: 'https://mcp.test/mcp',
              token_secret: 'DOCS_MCP_AUTH',
              timeout_ms: 2_000,
              overrides: { list_pages: { sideEffect: true } },
            },
            { name: 'down', url: 'https://down.test/mcp', timeout_ms: 500 },
          ]),
          DOCS_MCP_AUTH: 'docs-mcp-token-0123',
        },
        { isolate: true },
      ),
      // MCP servers behind OAuth (docs/mcp.md#oauth): a small authorization server on
      // auth.test (test/fakes/fake-oauth.ts) protecting SDK servers: one whose connection is
      // each person's, one the deployment's, one reached with client credentials.
      workerProject('mcp-oauth', {
        ...common,
        ...fakeProvider,
        PUBLIC_URL: 'https://edgeloop.test',
        MCP_TOKEN_KEY: 'ZWRnZWxvb3AtdGVzdC1tY3AtdG9rZW4ta2V5LTAwMDE=',
        // Mid-rotation (docs/mcp.md#where-tokens-live): what the key before sealed still
        // opens (test/mcp-oauth/key-rotation.test.ts).
        MCP_TOKEN_KEY_PREVIOUS: 'ZWRnZWxvb3AtdGVzdC1tY3AtdG9rZW4ta2V5LTAwMDA=',
        MCP_SERVERS: JSON.stringify([
          {
            name: 'tracker',
            url: 'https://tracker.test/mcp',
            auth: 'oauth',
            owner: 'person',
            timeout_ms: 2_000,
          },
          {
            name: 'wiki',
            url: 'https://wiki.test/mcp',
            auth: 'oauth',
            owner: 'deployment',
            timeout_ms: 2_000,
          },
          {
            name: 'm2m',
            url: 'https://m2m.test/mcp',
            auth: 'client_credentials',
            client_id: 'edgeloop-m2m',
            client_secret_secret: 'M2M_CLIENT_SECRET',
            timeout_ms: 2_000,
          },
          {
            name: 'keyed',
            url: 'https://keyed.test/mcp',
            auth: 'client_credentials',
            client_id: 'edgeloop-keyed',
            private_key_secret: 'KEYED_PRIVATE_KEY',
            private_key_alg: 'ES256',
            timeout_ms: 2_000,
          },
        ]),
        M2M_CLIENT_SECRET: 'm2m-client-secret-0123456789',
        // A key made for this run of the tests; the fake authorization server checks the
        // client's assertions with its public half (KEYED_PUBLIC_JWK).
        KEYED_PRIVATE_KEY: KEYED.privateKey,
        KEYED_PUBLIC_JWK: KEYED.publicJwk,
      }),
      // Served agents behind OAuth (docs/serving.md#authorization): PUBLIC_URL set, so /mcp is
      // a protected resource of the Worker's own authorization server (OAUTH_KV, local).
      workerProject('serve-oauth', {
        ...common,
        ...fakeProvider,
        PUBLIC_URL: 'https://edgeloop.test',
      }),
      // A provider whose host never resolves (`.invalid`, RFC 2606): the model calls go out
      // through workerd's own fetch and fail as a deployment with a mistyped OPENAI_BASE_URL
      // would (docs/operations.md#an-unreachable-host). One retry keeps the backoff short.
      // workerd prints each failed lookup as an error line (`failed to lookup address
      // information`, expected here); not verbose, it leaves out the two `uncaught exception`
      // lines it adds for the same rejection, which the Worker handles.
      workerProject(
        'model-unreachable',
        {
          ...common,
          OPENAI_API_KEY: fakeProvider.OPENAI_API_KEY,
          OPENAI_BASE_URL: 'https://model.invalid/v1',
          MODEL_MAX_RETRIES: '1',
        },
        { verbose: false },
      ),
      // The offline scripted demo, exactly as `npm start` runs it: MODEL=demo (from
      // .dev.vars.example), no key, ENABLED_TOOLS unset (calculator and the demo tools).
      // Empty wins over values a developer may have in .dev.vars.
      workerProject(
        'offline-demo',
        { ...common, MODEL: 'demo', MODEL_ALLOWLIST: '', ENABLED_TOOLS: '', OPENAI_API_KEY: '' },
        { include: ['test/demo/**/*.test.ts'] },
      ),
      // MODEL=script, as docs/trying-tools.md sets it up: runs follow the script in their task,
      // no provider, a side-effecting tool (http_post) and an MCP server (the fake docs one).
      workerProject(
        'script-model',
        {
          ...common,
          MODEL: 'script',
          MODEL_ALLOWLIST: '',
          OPENAI_API_KEY: '',
          ENABLED_TOOLS: 'calculator,http_post',
          MCP_SERVERS: JSON.stringify([
            {
              name: 'docs',
              url: 'https://mcp.test/mcp',
              token_secret: 'DOCS_MCP_TOKEN',
              timeout_ms: 2_000,
            },
          ]),
          DOCS_MCP_TOKEN: 'docs-mcp-token-0123',
        },
        { include: ['test/script/**/*.test.ts'] },
      ),
      // Our agents served over A2A (docs/serving.md#a2a), called with @a2a-js/sdk's client:
      // MODEL=script, so a run does what its message says; http_post waits for an approval,
      // ask_person for an answer.
      workerProject('serve-a2a', {
        ...common,
        MODEL: 'script',
        MODEL_ALLOWLIST: '',
        OPENAI_API_KEY: '',
        ENABLED_TOOLS: 'calculator,http_post,ask_person',
      }),
      // Plain Node: the real Worker under Miniflare's API, killed and restarted (test/node/).
      // These files run in the workerd projects' group, two at a time: much of their time they
      // wait on processes they started (wrangler, workerd, Chromium, npm); the console test used
      // 47 s of CPU in its 128 s.
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['test/node/**/*.test.ts'],
          exclude: NODE_ALONE_FILES,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      // NODE_ALONE_FILES, one file at a time after every other file: two crash tests at once on
      // the shared 2-core machine ran past their timeouts, and the conformance suite's sse-retry
      // scenario (a reconnect timed to the server's `retry:`) failed beside the console test at
      // load 10 to 17.
      {
        test: {
          name: 'node-alone',
          environment: 'node',
          include: NODE_ALONE_FILES,
          testTimeout: 60_000,
          hookTimeout: 60_000,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
})
