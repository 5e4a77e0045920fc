import { describe, expect, it } from 'vitest'
import {
  folderViolations,
  wallViolations,
  importCycles,
  importEdges,
  layerViolations,
  parseImports,
  type FolderRules,
  type Layer,
} from './import-graph'

/**
 * The layer map of docs/architecture.md#layers: which group may import which (a group may always
 * import its own files) and which packages it may use. A group is a folder of src/ (`src/kernel`
 * → `kernel`), a top-level file of src/ by name (`src/config.ts` → `config`), `tools/` or `agents/`.
 * Change this map only together with the document.
 */
export const LAYERS: Record<string, Layer> = {
  index: { imports: ['routes', 'serve', 'runs', 'env'], packages: [] },
  routes: {
    imports: [
      'console',
      'env',
      'serve',
      'runs',
      'api',
      'config',
      'kernel',
      'slack',
      'security',
      'validation',
      'errors',
    ],
    packages: ['hono', '@asteasolutions/zod-to-openapi', 'zod'],
  },
  env: { imports: ['runs', 'env-vars'], packages: [] },
  // Our agents served to other agents (docs/serving.md): the MCP server (/mcp) and A2A, each a
  // protocol mapped onto runs through the run-start service; below routes/, above runs/.
  serve: {
    imports: [
      'env',
      'runs',
      'api',
      'config',
      'kernel',
      'security',
      'validation',
      'errors',
      'env-vars',
    ],
    packages: [
      'zod',
      '@modelcontextprotocol/sdk',
      '@a2a-js/sdk',
      '@cloudflare/workers-oauth-provider',
    ],
  },
  runs: {
    imports: [
      'api',
      'config',
      'kernel',
      'llm',
      'mcp',
      'tools',
      'slack',
      'security',
      'validation',
      'errors',
      'env-vars',
    ],
    packages: ['cloudflare:workers', 'zod'],
  },
  // The API's response shapes, as zod schemas: what routes answer and runs build.
  api: { imports: ['kernel', 'security'], packages: ['zod'] },
  config: {
    imports: [
      'agents',
      'kernel',
      'llm',
      'mcp',
      'tools',
      'slack',
      'security',
      'settings',
      'validation',
      'errors',
      'env-vars',
    ],
    packages: [],
  },
  // The eval runner (docs/evals.md): cases, expectations, reports, and replay through the
  // kernel; it reaches the Worker only over HTTP, and its Node side is scripts/eval-main.ts.
  evals: {
    imports: ['agents', 'kernel', 'tools', 'security', 'validation', 'errors'],
    packages: ['zod'],
  },
  // agents/: one file per agent, the catalog; definitions are data (types of the kernel only).
  agents: { imports: ['kernel'], packages: ['zod'] },
  llm: { imports: ['kernel', 'security', 'validation', 'errors'], packages: ['openai', 'zod'] },
  // The MCP client: sessions, tool adaptation, schema conversion; beside llm/, below runs/.
  // validation: the walks over JSON a server controls (schemas, results) without recursion.
  mcp: {
    imports: ['kernel', 'settings', 'validation', 'errors'],
    packages: ['zod', '@modelcontextprotocol/sdk', '@cfworker/json-schema'],
  },
  // tools/: the shipped tools and the ones a user writes, one file each.
  tools: { imports: ['kernel', 'settings', 'validation', 'errors'], packages: ['zod'] },
  settings: { imports: ['errors'], packages: ['zod'] },
  kernel: { imports: ['validation', 'security', 'errors'], packages: ['zod'] },
  slack: { imports: ['security', 'validation', 'errors'], packages: ['zod'] },
  security: { imports: ['errors', 'validation'], packages: [] },
  // Output schemas are checked by @cfworker/json-schema, a pure interpreter like zod.
  validation: { imports: [], packages: ['zod', '@cfworker/json-schema'] },
  errors: { imports: [], packages: [] },
  'env-vars': { imports: [], packages: [] },
  // @edgeloop/client: an installable package, so nothing of the service (its types are generated
  // from /openapi.json).
  client: { imports: [], packages: [] },
  // The web console's page and browser script, as strings (a leaf).
  console: { imports: [], packages: [] },
}

/**
 * Walls inside a layer (docs/architecture.md#layers): routes/ holds no business rule, so runs/
 * (where a run starts, src/runs/start/) never reaches into it; the Slack routes and the API routes
 * share only the HTTP plumbing at the top of routes/ and the declaration pieces of
 * routes/openapi/ (every group, the Slack routes too, declares its routes with them:
 * docs/decisions.md#the-openapi-document), never each other's handlers; routes/openapi/ knows
 * no Slack route (app.ts hands it every group's declarations).
 */
export const FOLDERS: FolderRules = {
  'src/runs': ['src/routes'],
  'src/routes/slack': ['src/routes/api'],
  'src/routes/api': ['src/routes/slack'],
  'src/routes/openapi': ['src/routes/slack'],
}

/**
 * The sub-folders of src/runs/ and the ones each may import, bottom up (docs/architecture.md#layers):
 * a sub-folder imports only folders below it. The files at the top of runs/ (the objects and
 * what ties a run together) may import any of them, and any of them a top file, as long as no
 * two parts import each other, however indirectly.
 */
export const RUNS_FOLDERS: Record<string, readonly string[]> = {
  // The run's events: the log, the streams, the live text pieces.
  events: [],
  // The D1 run index and the run-list hub.
  index: ['events'],
  // The queue of what a run owes the outside world, its kinds and what a delivery is given.
  outbox: ['index', 'events'],
  // The deliverers of each kind.
  otel: ['outbox', 'events'],
  slack: ['outbox'],
  // Delivering: the dispatch over kinds, the callback, the family reports, the pump.
  delivery: ['outbox', 'index', 'otel', 'slack', 'events'],
  // MCP connections (OAuth): their sealed store and a person's grant from link to callback.
  connections: [],
  // Where every run begins (the API, a webhook, Slack, a delegated child): the rules of a start.
  start: ['connections'],
}

/** `src/kernel/act.ts` → `kernel`, `src/config.ts` → `config`, `tools/demo/x.ts` → `tools`. */
export function groupOf(path: string): string {
  const parts = path.split('/')
  if (parts[0] === 'tools') return 'tools'
  if (parts[0] === 'agents') return 'agents'
  if (parts.length === 2) return parts[1]!.replace(/\.ts$/, '')
  return parts[1]!
}

// Every module of the Worker and of the tools, as text (Vite's glob; paths from the repo root).
const sources: Record<string, string> = Object.fromEntries(
  Object.entries(
    // Agents' Markdown instructions are modules too (wrangler.toml's Text rule): text, no imports.
    import.meta.glob(['/src/**/*.ts', '/tools/**/*.ts', '/agents/**/*.ts', '/agents/**/*.md'], {
      query: '?raw',
      import: 'default',
      eager: true,
    }),
  ).map(([path, source]) => [path.slice(1), source as string]),
)

describe('the import graph of src/ and tools/', () => {
  it('reads every module', () => {
    expect(Object.keys(sources)).toEqual(
      expect.arrayContaining(['src/index.ts', 'src/kernel/index.ts', 'tools/index.ts']),
    )
    expect(Object.keys(sources).length).toBeGreaterThan(80)
    expect(importEdges(sources).length).toBeGreaterThan(150)
  })

  it('has no import cycle, type-only imports included', () => {
    expect(importCycles(sources)).toEqual([])
  })

  it('points every import down the layers', () => {
    expect(layerViolations(sources, LAYERS, groupOf)).toEqual([])
  })

  it('keeps the walls inside a layer: runs/ apart from routes/, Slack routes apart from API ones', () => {
    expect(wallViolations(sources, FOLDERS)).toEqual([])
    // The walls stand around folders that exist.
    for (const folder of Object.keys(FOLDERS)) {
      expect(Object.keys(sources).some((path) => path.startsWith(`${folder}/`))).toBe(true)
    }
  })

  it('points every import between the parts of src/runs/ down, without cycles', () => {
    expect(folderViolations(sources, 'src/runs', RUNS_FOLDERS)).toEqual([])
  })

  it('has a layer map without cycles of its own', () => {
    const fake = Object.fromEntries(
      Object.entries(LAYERS).map(([group, layer]) => [
        `${group}.ts`,
        layer.imports.map((to) => `import '../${to}'`).join('\n'),
      ]),
    )
    const asFiles = Object.fromEntries(
      Object.entries(fake).map(([path, source]) => [`g/${path}`, source.replaceAll("'../", "'./")]),
    )
    expect(importCycles(asFiles)).toEqual([])
  })
})

describe('the import-graph checker', () => {
  it('names a sub-folder importing up or sideways, a cycle through a top file, an unplaced folder', () => {
    const runs = {
      'src/runs/view.ts': "import type { Row } from './index/row'",
      'src/runs/index/row.ts': "import { statusOf } from '../view'",
      'src/runs/slack/post.ts': "import { deliver } from '../delivery/deliver'",
      'src/runs/delivery/deliver.ts': "import type { Entry } from '../outbox/entry'",
      'src/runs/outbox/entry.ts': '',
      'src/runs/extra/x.ts': '',
    }
    const order = { index: [], outbox: [], slack: ['outbox'], delivery: ['outbox', 'slack'] }
    expect(folderViolations(runs, 'src/runs', order)).toEqual([
      'src/runs/extra/ has no place in the folder order; add it',
      'src/runs/slack/post.ts:1 imports src/runs/delivery/deliver.ts: src/runs/slack/ may not ' +
        'import src/runs/delivery/ (src/runs/slack/ may import outbox)',
      'src/runs/index/ → src/runs/view.ts → src/runs/index/',
    ])
    const fixed = { ...runs, 'src/runs/slack/post.ts': '', 'src/runs/index/row.ts': '' }
    expect(folderViolations(fixed, 'src/runs', { ...order, extra: [] })).toEqual([])
  })

  it('reads single-line, multi-line, type-only, re-export, side-effect and dynamic imports', () => {
    const source = [
      "import { a } from './a'",
      "import type { B } from '../b'",
      'import {',
      '  c,',
      '  type D,',
      "} from './c'",
      "export { e } from './e'",
      "export type * from './f'",
      "import './g'",
      "const h = await import('./h')",
      "// import { nope } from './comment'",
      "const text = 'import x from y'",
      "import * as z from 'zod/mini'",
    ].join('\n')
    expect(parseImports(source)).toEqual([
      { line: 1, specifier: './a' },
      { line: 2, specifier: '../b' },
      { line: 3, specifier: './c' },
      { line: 7, specifier: './e' },
      { line: 8, specifier: './f' },
      { line: 9, specifier: './g' },
      { line: 10, specifier: './h' },
      { line: 13, specifier: 'zod/mini' },
    ])
  })

  const good = {
    'src/kernel/machine.ts': "import { step } from './step'\nimport * as z from 'zod/mini'",
    'src/kernel/step.ts': "import { ModelError } from '../errors/model-error'",
    'src/errors/model-error.ts': 'export class ModelError extends Error {}',
    'src/runs/run-store.ts': "import { step } from '../kernel/step'",
    'tools/calculator.ts': "import { defineTool } from '../src/kernel/index'",
    'src/kernel/index.ts': "export { step } from './step'",
  }

  it('passes a graph that follows the layers', () => {
    expect(layerViolations(good, LAYERS, groupOf)).toEqual([])
    expect(importCycles(good)).toEqual([])
  })

  it('names an upward import, its line, and what the layer may import instead', () => {
    const bad = {
      ...good,
      'src/kernel/step.ts': "import x from './x'\nimport { log } from '../runs/log'",
    }
    expect(
      layerViolations({ ...bad, 'src/kernel/x.ts': '', 'src/runs/log.ts': '' }, LAYERS, groupOf),
    ).toEqual([
      'src/kernel/step.ts:2 imports src/runs/log.ts: kernel may not import runs ' +
        '(kernel may import validation, security, errors)',
    ])
  })

  it('names a sideways import between leaves and a package a layer may not use', () => {
    const bad = {
      'src/slack/verify.ts':
        "import { toHex } from '../kernel/canonical'\nimport { Hono } from 'hono'",
      'src/kernel/canonical.ts': "import { DurableObject } from 'cloudflare:workers'",
    }
    expect(layerViolations(bad, LAYERS, groupOf)).toEqual([
      'src/slack/verify.ts:1 imports src/kernel/canonical.ts: slack may not import kernel ' +
        '(slack may import security, validation, errors)',
      "src/slack/verify.ts:2 imports package 'hono', which slack may not use (slack may use zod)",
      "src/kernel/canonical.ts:1 imports package 'cloudflare:workers', which kernel may not use " +
        '(kernel may use zod)',
    ])
  })

  it('names a file in no layer and an import of no file', () => {
    const bad = { 'src/helpers/misc.ts': '', 'src/kernel/a.ts': "import { b } from './b'" }
    expect(layerViolations(bad, LAYERS, groupOf)).toEqual([
      'src/helpers/misc.ts is in no layer ("helpers"); add it to LAYERS',
      "src/kernel/a.ts:1 imports './b', which is no file in the graph",
    ])
  })

  it('names an import through a wall inside a layer', () => {
    const walled = {
      // The declaration pieces of routes/openapi/ are shared: only the API routes are walled off.
      'src/routes/slack/slack.ts':
        "import { startRun } from '../api/runs'\nimport { body } from '../body'\n" +
        "import { declareRoute } from '../openapi/serve-route'",
      'src/routes/api/runs.ts': "import { body } from '../body'",
      'src/routes/body.ts': '',
      'src/routes/openapi/serve-route.ts': '',
      'src/runs/start/start-run.ts': "import { ApiError } from '../../routes/api-error'",
      'src/routes/api-error.ts': '',
    }
    expect(wallViolations(walled, FOLDERS)).toEqual([
      'src/routes/slack/slack.ts:1 imports src/routes/api/runs.ts: src/routes/slack/ may not ' +
        'import src/routes/api/ (src/routes/slack/ may not import src/routes/api/)',
      'src/runs/start/start-run.ts:1 imports src/routes/api-error.ts: src/runs/ may not import ' +
        'src/routes/ (src/runs/ may not import src/routes/)',
    ])
  })

  it('finds a cycle made of type-only imports, and a self-import', () => {
    const cyclic = {
      ...good,
      'src/runs/deliver.ts': "import type { Ctx } from './slack-delivery'",
      'src/runs/slack-delivery.ts': "import type { Outbox } from './outbox'",
      'src/runs/outbox.ts': "import type { Ctx } from './deliver'",
      'src/kernel/self.ts': "import type { Self } from './self'",
    }
    expect(importCycles(cyclic)).toEqual([
      'src/kernel/self.ts → src/kernel/self.ts',
      'src/runs/deliver.ts → src/runs/slack-delivery.ts → src/runs/outbox.ts → src/runs/deliver.ts',
    ])
  })
})
