/**
 * src/mcp/zod-classic-for-sdk.ts against zod's classic API, on the MCP SDK's own protocol
 * schemas: `types.js` loaded as it is (classic zod) and bundled with `zod/v4` resolved to the
 * shim, as wrangler.toml's `[alias]` ships it. Every exported schema must describe the same JSON
 * Schema and give the same parse results: data, or issues with their messages (English). (The
 * error's class differs, classic's ZodError or core's; the SDK reads only `success` of a schema's
 * own `safeParse` and parses everything else with zod/mini's.)
 */
import { build } from 'esbuild'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
const TYPES = join(ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/esm/types.js')

type Module = Record<string, unknown>
interface Side {
  types: Module
  toJSONSchema: (schema: never, params: object) => unknown
}

let real: Side
let shim: Side

beforeAll(async () => {
  const core = (await import('zod/v4/core')) as unknown as Side
  real = { types: (await import(TYPES)) as Module, toJSONSchema: core.toJSONSchema }
  const out = await build({
    stdin: {
      contents:
        `export * as types from ${JSON.stringify(TYPES)}\n` +
        "export { toJSONSchema } from 'zod/v4/core'\n",
      resolveDir: ROOT,
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    // Exactly `zod/v4`, as wrangler's [alias] matches (esbuild's own alias matches prefixes).
    plugins: [shimPlugin],
    write: false,
    logLevel: 'silent',
  })
  const code = Buffer.from(out.outputFiles[0]!.contents).toString('base64')
  shim = (await import(`data:text/javascript;base64,${code}`)) as Side
})

type Parsed = { success: boolean; data?: unknown; error?: { issues: unknown } }
/** The plugin that resolves exactly `zod/v4` to the shim, as wrangler's [alias] matches. */
const shimPlugin = {
  name: 'zod-classic-for-sdk',
  setup(b: { onResolve: (o: { filter: RegExp }, f: () => { path: string }) => void }) {
    b.onResolve({ filter: /^zod\/v4$/ }, () => ({
      path: join(ROOT, 'src/mcp/zod-classic-for-sdk.ts'),
    }))
  },
}

/** What a fresh Node process that imports `zod/v4` (classic, or the shim) sees of zod/mini. */
async function settingsSeen(withShim: boolean): Promise<string> {
  const out = await build({
    stdin: {
      contents: [
        // A schema built with `zod/v4`, as the SDK's types.js builds them when it loads.
        "import * as classic from 'zod/v4'",
        "import * as z from 'zod/mini'",
        'globalThis.built = classic.object({ id: classic.string().optional() })',
        "import { globalConfig } from 'zod/v4/core'",
        'const parsed = z.safeParse(z.object({ a: z.string() }), { a: 1 })',
        'console.log(JSON.stringify({ message: parsed.error.issues[0].message,',
        '  memoizer: typeof globalConfig.memoizer }))',
      ].join('\n'),
      resolveDir: ROOT,
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    platform: 'node',
    plugins: withShim ? [shimPlugin] : [],
    write: false,
    logLevel: 'silent',
  })
  const dir = mkdtempSync(join(tmpdir(), 'edgeloop-zod-'))
  try {
    const file = join(dir, 'settings.mjs')
    writeFileSync(file, out.outputFiles[0]!.contents)
    return execFileSync(process.execPath, [file], { encoding: 'utf8' }).trim()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const isSchema = (v: unknown): v is { safeParse: (x: unknown) => Parsed } =>
  typeof v === 'object' && v !== null && '_zod' in v

/** Values each schema parses: JSON-RPC shapes, MCP results, and plain wrong ones. */
const VALUES: unknown[] = [
  undefined,
  null,
  0,
  -1,
  1.5,
  'text',
  '',
  'https://example.test/x',
  '2026-12-02T04:00:00Z',
  [],
  ['a'],
  {},
  { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  { jsonrpc: '2.0', id: 'a', result: { tools: [] } },
  { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'no such method' } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 2 } },
  {
    protocolVersion: '2025-06-18',
    capabilities: { tools: { listChanged: true }, extra: 1 },
    serverInfo: { name: 'docs', version: '1.0.0' },
  },
  {
    tools: [
      {
        name: 'search',
        inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
        annotations: { readOnlyHint: true },
        extra: true,
      },
    ],
    nextCursor: 'c2',
  },
  { tools: [{ name: 'bad', inputSchema: { type: 'string' } }] },
  { content: [{ type: 'text', text: 'hello' }], isError: false, structuredContent: { a: 1 } },
  { content: [{ type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' }] },
  { content: [{ type: 'image', data: 'not base64!', mimeType: 'image/png' }] },
  { content: [{ type: 'resource_link', uri: 'file:///a', name: 'a' }] },
  { content: [{ type: 'text' }] },
  { name: 'x', version: 1 },
  { type: 'text', text: 'x', _meta: { a: 1 } },
  { uri: 'file:///x', lastModified: '2026-12-02T04:00:00+01:00' },
  { uri: 'file:///x', lastModified: 'yesterday' },
  { elicitation: null },
  { elicitation: {} },
  { elicitation: { form: {}, url: {} } },
  { code: 1.5, message: 'x' },
]

describe("zod's classic API, as the MCP SDK's schemas use it", () => {
  it('builds every protocol schema to the same JSON Schema', () => {
    const names = Object.keys(real.types).filter((k) => isSchema(real.types[k]))
    expect(names.length).toBeGreaterThan(140)
    expect(Object.keys(shim.types).filter((k) => isSchema(shim.types[k]))).toEqual(names)
    const describe = (side: Side, name: string, io: string) => {
      try {
        return side.toJSONSchema(side.types[name] as never, { io, unrepresentable: 'any' })
      } catch (err) {
        return `throws: ${(err as Error).message}`
      }
    }
    for (const name of names) {
      for (const io of ['input', 'output']) {
        expect(describe(shim, name, io), `${name} (${io})`).toEqual(describe(real, name, io))
      }
    }
  })

  it('parses the same values to the same results and messages', () => {
    let compared = 0
    for (const [name, schema] of Object.entries(real.types)) {
      if (!isSchema(schema)) continue
      const other = shim.types[name] as typeof schema
      for (const value of VALUES) {
        const result = (r: Parsed) => JSON.stringify([r.success, r.data, r.error?.issues])
        expect(result(other.safeParse(value)), `${name} on ${JSON.stringify(value)}`).toBe(
          result(schema.safeParse(value)),
        )
        compared++
      }
    }
    expect(compared).toBeGreaterThan(4500)
  })

  it('sets the English messages and the memoizer for every schema, as classic does', async () => {
    const classic = await settingsSeen(false)
    expect(JSON.parse(classic)).toEqual({
      message: 'Invalid input: expected string, received number',
      memoizer: 'object',
    })
    expect(await settingsSeen(true)).toBe(classic)
  })
})
