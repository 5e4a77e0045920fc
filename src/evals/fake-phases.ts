import type { HttpFake } from '../../agents/define-eval'
import { sameJson } from '../kernel/canonical'
import type { EvalFile } from './case-schema'

/**
 * The cases split into phases whose fakes agree: the Worker's outbound requests carry no case,
 * so the cases running at once share one set of fakes, and two cases that fake the same request
 * differently (a status page up in one, down in the other) run in different phases. Order is
 * kept: each case goes into the first phase it agrees with.
 */
export function fakePhases(files: readonly EvalFile[]): EvalFile[][] {
  const phases: { fakes: HttpFake[]; files: Map<EvalFile, EvalFile['cases'][number][]> }[] = []
  for (const file of files) {
    for (const c of file.cases) {
      const fakes = c.fakes ?? []
      let phase = phases.find((p) => fakes.every((f) => p.fakes.every((g) => agree(f, g))))
      if (!phase) phases.push((phase = { fakes: [], files: new Map() }))
      phase.fakes.push(...fakes)
      phase.files.set(file, [...(phase.files.get(file) ?? []), c])
    }
  }
  return phases.map((p) => [...p.files].map(([file, cases]) => ({ ...file, cases })))
}

/** Two fakes agree unless they may answer the same request with different responses. */
function agree(a: HttpFake, b: HttpFake): boolean {
  if ((a.method ?? 'GET') !== (b.method ?? 'GET') || !overlap(a.url, b.url)) return true
  const response = (f: HttpFake) => ({
    status: f.status ?? 200,
    body: f.body ?? null,
    headers: f.headers ?? {},
  })
  return sameJson(response(a), response(b))
}

function overlap(a: string, b: string): boolean {
  const prefix = (u: string) => (u.endsWith('*') ? u.slice(0, -1) : null)
  const pa = prefix(a)
  const pb = prefix(b)
  if (pa !== null && pb !== null) return pa.startsWith(pb) || pb.startsWith(pa)
  if (pa !== null) return b.startsWith(pa)
  if (pb !== null) return a.startsWith(pb)
  return a === b
}
