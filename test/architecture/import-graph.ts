/**
 * The import-graph check behind test/architecture/import-graph.test.ts: every import points down
 * the layers (docs/architecture.md#layers) and no files import each other in a cycle, type-only
 * imports included. Pure functions over `{ path: source }`, so the checker itself is testable.
 */

/** Which groups a group may import from (besides itself) and which packages it may use. */
export interface Layer {
  imports: readonly string[]
  packages: readonly string[]
}

/** One import statement: the file it is in, its line and the specifier as written. */
export interface ImportEdge {
  from: string
  line: number
  specifier: string
  /** The imported file, for relative specifiers that resolve to a file of the set. */
  to?: string
}

// Top-level statements start in column 0 in this codebase (prettier); a multi-line import is
// `import {` … `} from '…'`. Code quoted inside strings never starts a line with `import `.
const FROM = /^(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]/
const SIDE_EFFECT = /^import\s*['"]([^'"]+)['"]/
const OPEN = /^(?:import|export)\s+(?:type\s+)?\{[^}]*$/
const CLOSE = /^\}\s*from\s*['"]([^'"]+)['"]/
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g

/** The specifiers a TypeScript module imports or re-exports, with their line numbers. */
export function parseImports(source: string): { line: number; specifier: string }[] {
  const found: { line: number; specifier: string }[] = []
  const lines = source.split('\n')
  let open: number | undefined
  lines.forEach((text, index) => {
    const line = index + 1
    if (open !== undefined) {
      const close = CLOSE.exec(text)
      if (close) {
        found.push({ line: open, specifier: close[1]! })
        open = undefined
      }
      return
    }
    const match = FROM.exec(text) ?? SIDE_EFFECT.exec(text)
    if (match) found.push({ line, specifier: match[1]! })
    else if (OPEN.test(text)) open = line
    if (!/^\s*(\/\/|\*|\/\*)/.test(text)) {
      for (const dynamic of text.matchAll(DYNAMIC)) found.push({ line, specifier: dynamic[1]! })
    }
  })
  return found
}

/**
 * Resolves `./x` from `src/a/b.ts` the way the bundler does: `x.ts`, then `x/index.ts`; `./x.js`
 * (how the installable client spells its imports, for Node) is `x.ts`.
 */
export function resolveImport(
  from: string,
  specifier: string,
  files: ReadonlySet<string>,
): string | undefined {
  if (!specifier.startsWith('.')) return undefined
  const parts = from.split('/').slice(0, -1)
  for (const part of specifier.split('/')) {
    if (part === '..') parts.pop()
    else if (part !== '.') parts.push(part)
  }
  const base = parts.join('/')
  const candidates = [base, `${base}.ts`, `${base}/index.ts`, base.replace(/\.js$/, '.ts')]
  return candidates.find((candidate) => files.has(candidate))
}

/** Every import of every file, resolved where it is relative. */
export function importEdges(sources: Readonly<Record<string, string>>): ImportEdge[] {
  const files = new Set(Object.keys(sources))
  return Object.entries(sources).flatMap(([from, source]) =>
    parseImports(source).map(({ line, specifier }) => {
      const to = resolveImport(from, specifier, files)
      return to ? { from, line, specifier, to } : { from, line, specifier }
    }),
  )
}

/** The package an external specifier names: `zod/mini` → `zod`, `@scope/x/y` → `@scope/x`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!
}

/**
 * Every way the files break the layer map: an import up or across the layers, a package a layer
 * may not use, a relative import that resolves to no file, a file in no layer.
 */
export function layerViolations(
  sources: Readonly<Record<string, string>>,
  layers: Readonly<Record<string, Layer>>,
  groupOf: (path: string) => string,
): string[] {
  const problems: string[] = []
  for (const path of Object.keys(sources)) {
    const group = groupOf(path)
    if (!layers[group]) problems.push(`${path} is in no layer ("${group}"); add it to LAYERS`)
  }
  for (const edge of importEdges(sources)) {
    const where = `${edge.from}:${edge.line}`
    const group = groupOf(edge.from)
    const layer = layers[group]
    if (!layer) continue
    if (edge.specifier.startsWith('.')) {
      if (!edge.to) {
        problems.push(`${where} imports '${edge.specifier}', which is no file in the graph`)
        continue
      }
      const target = groupOf(edge.to)
      if (target !== group && !layer.imports.includes(target)) {
        problems.push(
          `${where} imports ${edge.to}: ${group} may not import ${target} ` +
            `(${group} may import ${layer.imports.join(', ') || 'nothing outside itself'})`,
        )
      }
    } else if (!layer.packages.includes(packageOf(edge.specifier))) {
      problems.push(
        `${where} imports package '${edge.specifier}', which ${group} may not use ` +
          `(${group} may use ${layer.packages.join(', ') || 'no package'})`,
      )
    }
  }
  return problems
}

/** Folders a folder's files may not import from, though both are in one layer. */
export type FolderRules = Readonly<Record<string, readonly string[]>>

const within = (path: string, folder: string) => path.startsWith(`${folder}/`)

/**
 * Every import that crosses a wall inside a layer: a file under a folder of `rules` importing a
 * file under one of the folders that folder may not reach.
 */
export function wallViolations(
  sources: Readonly<Record<string, string>>,
  rules: FolderRules,
): string[] {
  const problems: string[] = []
  for (const edge of importEdges(sources)) {
    if (!edge.to) continue
    for (const [folder, walled] of Object.entries(rules)) {
      if (!within(edge.from, folder)) continue
      const hit = walled.find((w) => within(edge.to!, w))
      if (hit) {
        problems.push(
          `${edge.from}:${edge.line} imports ${edge.to}: ${folder}/ may not import ${hit}/ ` +
            `(${folder}/ may not import ${walled.join('/, ')}/)`,
        )
      }
    }
  }
  return problems
}

/** Every import cycle between files, as `a.ts → b.ts → a.ts` (Tarjan's strongly connected sets). */
export function importCycles(sources: Readonly<Record<string, string>>): string[] {
  const next = new Map<string, Set<string>>()
  for (const path of Object.keys(sources)) next.set(path, new Set())
  for (const edge of importEdges(sources)) if (edge.to) next.get(edge.from)!.add(edge.to)
  return cyclesOf(next)
}

/**
 * How the parts of folder `root` (`src/runs`) break `folders`: a sub-folder is one part, a file at
 * the top of `root` a part of its own. A sub-folder imports only the sub-folders `folders` lists
 * for it (below it), every sub-folder is listed, and no parts import each other in a cycle (a
 * sub-folder and a top file included).
 */
export function folderViolations(
  sources: Readonly<Record<string, string>>,
  root: string,
  folders: Readonly<Record<string, readonly string[]>>,
): string[] {
  const partOf = (path: string): string | undefined => {
    if (!path.startsWith(`${root}/`)) return undefined
    const rest = path.slice(root.length + 1)
    return rest.includes('/') ? `${root}/${rest.split('/')[0]}/` : path
  }
  const folderOf = (part: string) => (part.endsWith('/') ? part.slice(root.length + 1, -1) : null)
  const problems: string[] = []
  const next = new Map<string, Set<string>>()
  for (const path of Object.keys(sources)) {
    const part = partOf(path)
    if (!part) continue
    next.set(part, next.get(part) ?? new Set())
    const folder = folderOf(part)
    if (folder !== null && !folders[folder]) {
      problems.push(`${part} has no place in the folder order; add it`)
    }
  }
  for (const edge of importEdges(sources)) {
    const from = partOf(edge.from)
    const to = edge.to && partOf(edge.to)
    if (!from || !to || from === to) continue
    next.get(from)!.add(to)
    const [fromFolder, toFolder] = [folderOf(from), folderOf(to)]
    const allowed = fromFolder !== null && folders[fromFolder]
    if (allowed && toFolder !== null && !allowed.includes(toFolder)) {
      problems.push(
        `${edge.from}:${edge.line} imports ${edge.to}: ${from} may not import ${to} ` +
          `(${from} may import ${allowed.join(', ') || 'no other sub-folder'})`,
      )
    }
  }
  return [...new Set(problems), ...cyclesOf(next)]
}

/** Every cycle of a directed graph (Tarjan's strongly connected sets), each as its shortest loop. */
function cyclesOf(next: Map<string, Set<string>>): string[] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[] = []
  const visit = (node: string): void => {
    index.set(node, index.size)
    low.set(node, index.get(node)!)
    stack.push(node)
    onStack.add(node)
    for (const to of next.get(node)!) {
      if (!index.has(to)) {
        visit(to)
        low.set(node, Math.min(low.get(node)!, low.get(to)!))
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!))
      }
    }
    if (low.get(node) !== index.get(node)) return
    const members: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      members.push(member)
    } while (member !== node)
    if (members.length > 1 || next.get(node)!.has(node)) cycles.push(describeCycle(members, next))
  }
  for (const node of [...next.keys()].sort()) if (!index.has(node)) visit(node)
  return cycles
}

/** The shortest loop through a strongly connected set, from its first file by name. */
function describeCycle(members: string[], next: Map<string, Set<string>>): string {
  const inSet = new Set(members)
  const start = [...members].sort()[0]!
  const parent = new Map<string, string>()
  const queue = [start]
  while (queue.length) {
    const node = queue.shift()!
    for (const to of [...next.get(node)!].sort()) {
      if (!inSet.has(to)) continue
      if (to === start) {
        const path = [start]
        for (let at = node; at !== start; at = parent.get(at)!) path.splice(1, 0, at)
        return [...path, start].join(' → ')
      }
      if (!parent.has(to)) {
        parent.set(to, node)
        queue.push(to)
      }
    }
  }
  return members.join(' → ')
}
