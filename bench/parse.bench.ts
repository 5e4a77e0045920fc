/**
 * Output-parser benchmark: CPU to read one long reply, at 10 KiB and 100 KiB, with the
 * call at the very end so every family scans the whole text. Linear parsing shows as the same
 * time per byte at both sizes. Printed by `npm run bench -- kernel`.
 */
import { parseOutput } from '../src/kernel/index'
import { verdictLine } from './verdict.mjs'

const SIZES_KIB = [10, 100] as const
const REPEAT = 5
const SAMPLE_MS = 40
/** Time per byte at 100 KiB over the 10 KiB figure. */
const GOAL_GROWTH = 1.5
/** CPU for a whole 100 KiB reply. */
const GOAL_100K_MS = 20
/** Replies built to make a careless parser quadratic: still this cheap per byte. */
const GOAL_ADVERSARIAL_NS_PER_BYTE = 500

// Prose the way long replies read: Markdown, braces and quotes in text, data objects, labels.
const PARAGRAPH = [
  'Thought: the report says the set {a, b} is "closed" under {x} — it isn\'t, though.',
  'Here is a data sample: {"id": 7, "name": "Bob", "tags": ["a", "b"]} and a stray } or {.',
  '```python\nprint(len(items))  # a call in a code block is not an action\n```',
  '- Step 3: compare `f(x)` with g(y) and {"status": "ok"}; 5" screens, O\'Brien\'s notes.',
  '',
].join('\n')
const CALL = '<tool_call>\n{"name": "search", "arguments": {"q": "last step"}}\n</tool_call>'

function reply(kib: number): string {
  const body = PARAGRAPH.repeat(Math.ceil((kib * 1024) / PARAGRAPH.length))
  return body.slice(0, kib * 1024 - CALL.length) + CALL
}

function cpuMicros(): number {
  const proc = (globalThis as { process?: { cpuUsage(): { user: number; system: number } } })
    .process
  if (!proc) throw new Error('benchParse needs Node: it reads process.cpuUsage()')
  const u = proc.cpuUsage()
  return u.user + u.system
}

/** CPU per parse: least of REPEAT batches of about SAMPLE_MS each, after a warm-up batch. */
function measure(text: string, expected = 'search'): number {
  const once = () => {
    const out = parseOutput(text)
    if (out.call.name !== expected) throw new Error(`bench reply misread: ${out.call.name}`)
  }
  const warm = cpuMicros()
  let runs = 0
  while (cpuMicros() - warm < SAMPLE_MS * 1000) {
    once()
    runs++
  }
  let best = Infinity
  for (let r = 0; r < REPEAT; r++) {
    const start = cpuMicros()
    for (let k = 0; k < runs; k++) once()
    best = Math.min(best, (cpuMicros() - start) / runs)
  }
  return best
}

/** Report lines and PASS/FAIL verdicts for the parser. */
export async function benchParse(): Promise<{ lines: string[]; verdicts: string[] }> {
  // Loaded here, not at the top: these replies are megabytes of strings, and held in the heap
  // from the start they doubled the kernel's figures (its GC work), measured before this runs.
  const { ADVERSARIAL } = await import('../test/fixtures/adversarial-replies')
  const lines = [
    '',
    'output parser: one reply, the call at its end (Hermes <tool_call>)',
    'reply     µs/parse   ns/byte',
  ]
  const perByte: number[] = []
  let us100 = 0
  for (const kib of SIZES_KIB) {
    const us = measure(reply(kib))
    perByte.push((us * 1000) / (kib * 1024))
    if (kib === 100) us100 = us
    lines.push(
      `${String(kib).padStart(4)} KiB ${us.toFixed(0).padStart(10)} ${perByte.at(-1)!.toFixed(2).padStart(9)}`,
    )
  }
  const growth = perByte[1]! / perByte[0]!
  let worst = { name: '', ns: 0 }
  for (const [name, text] of ADVERSARIAL) {
    const ns = (measure(text, '__unparsable__') * 1000) / text.length
    lines.push(
      `${name.padEnd(34)} ${(text.length / 1024).toFixed(0).padStart(5)} KiB ${ns.toFixed(1).padStart(8)} ns/byte`,
    )
    if (ns > worst.ns) worst = { name, ns }
  }
  return {
    lines,
    verdicts: [
      verdictLine(
        { 'worst ns/byte': worst.ns },
        () => worst.ns <= GOAL_ADVERSARIAL_NS_PER_BYTE,
        `parse: the worst adversarial reply (${worst.name}) costs ${worst.ns.toFixed(1)} ns/byte (goal ≤ ${GOAL_ADVERSARIAL_NS_PER_BYTE})`,
      ),
      verdictLine(
        { 'ns/byte at 10 KiB': perByte[0], 'ns/byte at 100 KiB': perByte[1] },
        () => growth <= GOAL_GROWTH,
        `parse: ns/byte at 100 KiB is ${growth.toFixed(2)}x the 10 KiB figure (goal ≤ ${GOAL_GROWTH}x, linear)`,
      ),
      verdictLine(
        { 'µs per 100 KiB parse': us100 },
        () => us100 / 1000 <= GOAL_100K_MS,
        `parse: a 100 KiB reply takes ${(us100 / 1000).toFixed(2)} ms CPU (goal ≤ ${GOAL_100K_MS} ms)`,
      ),
    ],
  }
}
