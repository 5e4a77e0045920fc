// The `openai` package as the Worker ships it: the package bundled into one module in which the
// API resources and `lib/` helpers edgeloop never calls are replaced by stand-ins. The client's
// constructor attaches every resource class, so without this the bundle carries all of them.
// Kept real: the client, its retries, errors, request and SSE code (`core/`, `internal/`), and the
// whole `chat` resource, so `chat.completions.create` — streamed or not — is the package's code.
// A stand-in keeps its module's exports: a resource class still constructs, and any property of
// an instance other than its own throws a clear error; a `lib/` export throws when used at all.
//
// scripts/build.mjs runs this (wrangler.toml's `[build] command`, and vitest.config.ts for the
// test Workers); wrangler.toml's `[alias]` and vitest.config.ts point `openai` at the output
// (docs/development.md#the-build). The output is rebuilt only when the package or this
// file changed: its first line holds their digest.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeAtomic } from './write-atomic.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const pkg = join(root, 'node_modules', 'openai')

/** The module wrangler.toml's `[alias]` and vitest.config.ts point `openai` at. */
export const SLIM_OPENAI = join(root, 'node_modules', '.cache', 'edgeloop', 'openai.mjs')

/** What a stand-in's error says, so a failure names where to look. */
const LEFT_OUT =
  "is left out of edgeloop's bundle (scripts/slim-openai.mjs keeps only chat.completions)"

/**
 * Whether the module at `path` (relative to the package, `/`-separated) is replaced: every API
 * resource but `chat` and the shared types, and every `lib/` helper. A module that re-exports
 * with `export *` is kept: the modules it names are replaced one by one.
 */
export function isLeftOut(path) {
  if (path.startsWith('lib/')) return true
  if (!path.startsWith('resources/')) return false
  return !/^resources\/(chat\/|index\.m?js$|shared\.m?js$)/.test(path)
}

/** The names a module exports, read from its source (the package's generated ESM). */
export function exportedNames(source) {
  const names = new Set()
  for (const m of source.matchAll(/^export (?:async )?(?:class|function\*?|const|let|var) (\w+)/gm))
    names.add(m[1])
  for (const m of source.matchAll(/^export \{([^}]*)\}/gm)) {
    for (const part of m[1].split(',')) {
      const name = part
        .trim()
        .split(/\s+as\s+/)
        .pop()
      if (name) names.add(name)
    }
  }
  if (/^export default /m.test(source)) names.add('default')
  return [...names]
}

/** The stand-in for one module: same export names, nothing of its code. */
export function standIn(path, source) {
  const make = path.startsWith('resources/') ? 'resource' : 'helper'
  const lines = [`import { resource, helper } from ${JSON.stringify(STAND_INS)}`]
  for (const name of exportedNames(source)) {
    // A resource class the client constructs; anything else (lib/ helpers, non-class exports).
    const isClass = new RegExp(`^export class ${name}\\b`, 'm').test(source)
    const value = `/* @__PURE__ */ ${isClass ? make : 'helper'}(${JSON.stringify(name)})`
    lines.push(name === 'default' ? `export default ${value}` : `export const ${name} = ${value}`)
  }
  return lines.join('\n') + '\n'
}

/** The module every stand-in imports its two makers from. */
const STAND_INS = 'edgeloop:openai-stand-ins'
const standInMakers = `import { APIResource } from ${JSON.stringify(join(pkg, 'core', 'resource.mjs'))}
const leftOut = (name) => new Error('openai: ' + name + ' ' + ${JSON.stringify(LEFT_OUT)})
// A resource class: constructs (the client attaches it), and every method of it throws.
export function resource(name) {
  return class extends APIResource {
    constructor(client) {
      super(client)
      return new Proxy(this, {
        get(target, key, receiver) {
          if (typeof key === 'symbol' || key in target) return Reflect.get(target, key, receiver)
          throw leftOut(name + '.' + key)
        },
      })
    }
  }
}
// Any other export: throws when called, constructed, or a property of it is read.
export function helper(name) {
  return new Proxy(function () {}, {
    get(target, key) {
      if (typeof key === 'symbol' || key === 'prototype' || key === 'name') return target[key]
      throw leftOut(name + '.' + String(key))
    },
    apply() {
      throw leftOut(name)
    },
    construct() {
      throw leftOut('new ' + name)
    },
  })
}
`

/** The esbuild plugin that loads a stand-in in place of each left-out module. */
function standInsPlugin() {
  return {
    name: 'openai-stand-ins',
    setup(build) {
      build.onResolve({ filter: new RegExp(`^${STAND_INS}$`) }, () => ({
        path: STAND_INS,
        namespace: 'stand-ins',
      }))
      build.onLoad({ filter: /.*/, namespace: 'stand-ins' }, () => ({
        contents: standInMakers,
        loader: 'js',
        resolveDir: pkg,
      }))
      build.onLoad({ filter: /[\\/]node_modules[\\/]openai[\\/].*\.mjs$/ }, (args) => {
        const path = relative(pkg, args.path).split(sep).join('/')
        if (!isLeftOut(path)) return null
        const source = readFileSync(args.path, 'utf8')
        if (/^export \* from /m.test(source)) return null
        return { contents: standIn(path, source), loader: 'js' }
      })
    },
  }
}

/** Digest of what the output is made from: the package's version and this file. */
function digest() {
  const version = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).version
  const self = readFileSync(fileURLToPath(import.meta.url))
  return createHash('sha256').update(version).update(self).digest('hex').slice(0, 16)
}

/** Writes SLIM_OPENAI unless it is current; returns its path. */
export async function buildSlimOpenAI() {
  const stamp = `// edgeloop slim openai ${digest()}\n`
  let current = ''
  try {
    current = readFileSync(SLIM_OPENAI, 'utf8').slice(0, stamp.length)
  } catch {}
  if (current === stamp) return SLIM_OPENAI
  // wrangler's own esbuild: the same version that bundles the Worker, and no extra dependency.
  const esbuild = createRequire(join(root, 'node_modules', 'wrangler', 'package.json'))('esbuild')
  const result = await esbuild.build({
    entryPoints: [join(pkg, 'index.mjs')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    plugins: [standInsPlugin()],
  })
  writeAtomic(SLIM_OPENAI, stamp + result.outputFiles[0].text)
  return SLIM_OPENAI
}
