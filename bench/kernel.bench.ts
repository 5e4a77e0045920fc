/**
 * Kernel CPU benchmark: CPU per step and per KiB of model request, for both protocols,
 * against the cheapest hand-written loop of each protocol in the same process. Node only (it
 * reads process.cpuUsage); run it with `node bench/kernel-bench.mjs` or through `npm run bench`.
 */
import * as z from 'zod/mini'
import * as thisKernel from '../src/kernel/index'
import type { Model, ModelRequest, ModelResponse, Protocol } from '../src/kernel/index'
import { benchParse } from './parse.bench'
import { verdictLine } from './verdict.mjs'

const SIZES = [20, 100] as const
const OBSERVATION = 'x'.repeat(1024)
/**
 * The agent cases: instructions of a few KiB first in the system prompt, and an output schema the
 * final answer must match, so their per-step CPU can be read beside the plain cases'.
 */
const INSTRUCTIONS = Array.from(
  { length: 40 },
  (_, i) =>
    `- Rule ${i + 1}: read each page in order, note what it says about the document's subject, ` +
    'and never skip one; quote page numbers when you report.',
).join('\n')
const OUTPUT_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    pages: { type: 'integer', minimum: 0 },
    summary: { type: 'string' },
    severity: { enum: ['low', 'medium', 'high'] },
  },
  required: ['pages', 'summary', 'severity'],
  additionalProperties: false,
}
const FINAL_ANSWER = 'final_answer'
type Variant = 'plain' | 'agent'
const VARIANTS: readonly Variant[] = ['plain', 'agent']
/**
 * Warm-up per loop and case, counted in steps (runs × steps per run), not in time: V8 optimizes a
 * function after it has run enough, so a count gives every machine the same warm-up. Measured on
 * the 2-core CI machine (docs/architecture.md#performance): from a cold process the kernel costs 40–60 µs/step for
 * its first few thousand steps and settles after 100k–250k steps; the 30-line prototypes settle
 * within a few thousand.
 */
const WARMUP_STEPS = 300_000
/**
 * Steps counted as the cold figure: in fresh processes, with a goal, when KernelExtras.cold is
 * given; else the start of this process's warm-up, printed without one.
 */
const COLD_STEPS = 10_000
const SAMPLE_MS = 30
/**
 * Rounds, each one batch of each loop of every case: this machine's speed for allocation-heavy
 * code drifts by up to 2x over seconds (docs/architecture.md#performance), so the kernel and its
 * prototype are measured side by side, each case's batches are spread over the whole run, and
 * each figure is the least of its batches.
 */
const ROUNDS = 12
const GOAL_TEXT = 2
const GOAL_NATIVE = 10
const GOAL_GROWTH = 1.5
/** A cold kernel (a fresh isolate's first steps) against the same kernel warm. */
const GOAL_COLD = 3
/** The kernel warm against the previous release's, built from git and measured beside it. */
const GOAL_PREVIOUS = 1.1
/** Kernel CPU per step, either protocol (COMMON rules: at or under 10 µs). */
const GOAL_US_PER_STEP = 10

/** Runs one task to the end; the kernel returns the bytes it accounted (docs/architecture.md#budgets-and-edge-limits). */
type Loop = (model: BenchModel, steps: number) => Promise<number | undefined>

interface Figures {
  cpuUs: number
  requestBytes: number
  kernelBytes?: number
}

/** A zero-latency scripted model: N-1 tool calls with new arguments each time, then an answer. */
class BenchModel implements Model {
  readonly name = 'bench'
  readonly seen: { messages: ModelRequest['messages']; tools: ModelRequest['tools'] }[] = []
  #turn = 0
  constructor(
    readonly protocol: Protocol,
    readonly steps: number,
    readonly variant: Variant = 'plain',
  ) {}

  async complete(request: ModelRequest): Promise<ModelResponse> {
    // Keep a shallow copy; sizes are measured after the clock stops.
    this.seen.push({ messages: request.messages.slice(), tools: request.tools })
    const k = this.#turn++
    const last = k === this.steps - 1
    const structured = this.variant === 'agent'
    const answer = structured ? { pages: k, summary: 'all read', severity: 'low' } : 'all read'
    if (this.protocol === 'text') {
      const action = last
        ? { thought: 'done', action: 'finish', args: { answer } }
        : { thought: `read page ${k}`, action: 'fetch_page', args: { page: k } }
      return { text: '```json\n' + JSON.stringify(action) + '\n```', finishReason: 'stop' }
    }
    if (last && !structured) return { text: 'all read', finishReason: 'stop' }
    const call = last
      ? { name: FINAL_ANSWER, arguments: JSON.stringify({ answer }) }
      : { name: 'fetch_page', arguments: JSON.stringify({ page: k }) }
    return {
      text: null,
      toolCalls: [{ id: `call_${k}`, type: 'function', function: call }],
      finishReason: 'tool_calls',
    }
  }

  /** JSON bytes of every request received (each message measured once). */
  requestBytes(): number {
    const sizes = new WeakMap<object, number>()
    const size = (value: object) => {
      let n = sizes.get(value)
      if (n === undefined) sizes.set(value, (n = JSON.stringify(value).length))
      return n
    }
    let total = 0
    for (const r of this.seen) {
      for (const m of r.messages) total += size(m) + 1
      if (r.tools) total += size(r.tools)
    }
    return total
  }
}

/**
 * The kernel exports a loop uses: this tree's, or an earlier commit's built from git history at
 * bench time (bench/kernel-extras.mjs), with the zod it was built with.
 */
export type KernelApi = Pick<
  typeof thisKernel,
  | 'createRunState'
  | 'defineTool'
  | 'MemoryObservationStore'
  | 'runSlice'
  | 'toRunResult'
  | 'ToolRegistry'
> & { z: typeof z }
const CURRENT: KernelApi = { ...thisKernel, z }

/** The one tool, defined with each kernel's own defineTool and registry. */
const registries = new WeakMap<KernelApi, thisKernel.ToolRegistry>()
function registryOf(api: KernelApi): thisKernel.ToolRegistry {
  let found = registries.get(api)
  if (!found) {
    const fetchPage = api.defineTool({
      name: 'fetch_page',
      description: 'Fetch one page of the document.',
      params: api.z.object({ page: api.z.number().check(api.z.int(), api.z.minimum(0)) }),
      returns: 'The page text (1 KiB).',
      handler: () => OBSERVATION,
    })
    registries.set(api, (found = new api.ToolRegistry([fetchPage])))
  }
  return found
}
const registry = registryOf(CURRENT)

const kernelLoop =
  (protocol: Protocol, variant: Variant, api: KernelApi = CURRENT): Loop =>
  async (model, steps) => {
    const { createRunState, runSlice, toRunResult, MemoryObservationStore } = api
    const registry = registryOf(api)
    const state = createRunState({
      id: 'bench',
      task: 'Read every page of the document.',
      tools: registry.names(),
      protocol,
      budget: { maxSteps: steps, maxPromptTokens: 1e12, maxSeconds: 86_400 },
      policy: { mode: 'deny' },
      ...(variant === 'agent'
        ? { agent: { instructions: INSTRUCTIONS, output: OUTPUT_SCHEMA } }
        : {}),
    })
    const unlimited = { maxTransitions: Infinity, maxWallMs: Infinity, maxBytes: Infinity }
    const out = await runSlice(
      state,
      {
        model,
        registry,
        observations: new MemoryObservationStore(),
      },
      unlimited,
    )
    const result = toRunResult(out.state)
    if (!result.ok) throw new Error(`bench run failed: ${result.stopReason} ${result.error}`)
    if (variant === 'agent' && result.output === undefined) throw new Error('no structured answer')
    return out.bytes
  }

/**
 * One plain native run of `steps` steps (the 1 KiB observation each) through this tree's kernel
 * and the bench's scripted model: what bench/peer/kernel-vs-ai-sdk.ts sets beside the AI SDK.
 */
export async function kernelNativeRun(steps: number): Promise<void> {
  const model = new BenchModel('native', steps)
  await kernelLoop('native', 'plain')(model, steps)
  if (model.seen.length !== steps) throw new Error(`kernel: ${model.seen.length} of ${steps} steps`)
}

/**
 * The same run through the bench's 30-line native loop (no argument check, no budgets, no trace,
 * nothing to resume from): set beside the kernel and the AI SDK as the least a loop costs.
 */
export async function prototypeNativeRun(steps: number): Promise<void> {
  const model = new BenchModel('native', steps)
  await nativePrototype('plain')(model, steps)
  if (model.seen.length !== steps) throw new Error(`prototype: ${model.seen.length} of ${steps}`)
}

/** The agent's part of a prototype's system prompt: its instructions, and the schema for agents. */
const prototypeInstructions = (variant: Variant) =>
  variant === 'agent'
    ? `${INSTRUCTIONS}\n\nAnswer with JSON matching: ${JSON.stringify(OUTPUT_SCHEMA)}\n\n`
    : ''

/** The classic text prototype: join the prompt each step, regex the action out. */
const textPrototype =
  (variant: Variant): Loop =>
  async (model, steps) => {
    const tools: Record<string, (args: { page: number }) => string> = {
      fetch_page: () => OBSERVATION,
    }
    const system = `${prototypeInstructions(variant)}You are an agent. Tools:\n${registry.textSpec()}\nReply with a JSON action.`
    const history: string[] = []
    for (let i = 0; i < steps; i++) {
      const prompt = [system, 'Task: Read every page of the document.', ...history].join('\n\n')
      const res = await model.complete({
        protocol: 'text',
        messages: [{ role: 'user', content: prompt }],
        timeoutMs: 60_000,
      })
      const text = res.text ?? ''
      const m = /"action"\s*:\s*"([^"]+)"\s*,\s*"args"\s*:\s*(\{[^}]*\})/.exec(text)
      if (!m) {
        history.push(text, 'Observation: could not parse your action')
        continue
      }
      // The regex stops at the first `}`: a structured answer is an object, so finish goes first.
      if (m[1] === 'finish') return undefined
      const args = JSON.parse(m[2]!)
      const tool = tools[m[1]!]
      let observation: string
      try {
        observation = tool ? String(tool(args)) : `Error: no tool ${m[1]}`
      } catch (err) {
        observation = `Error: ${String(err)}`
      }
      history.push(text, `Observation: ${observation}`)
    }
    throw new Error('text prototype did not finish')
  }

/** The bare native loop: push messages, JSON.parse the arguments. */
const nativePrototype =
  (variant: Variant): Loop =>
  async (model, steps) => {
    const finish = {
      type: 'function' as const,
      function: {
        name: FINAL_ANSWER,
        description: 'Give the final answer.',
        parameters: { type: 'object', properties: { answer: OUTPUT_SCHEMA }, required: ['answer'] },
      },
    }
    const tools = variant === 'agent' ? [...registry.openaiTools(), finish] : registry.openaiTools()
    const messages: ModelRequest['messages'] = [
      { role: 'system', content: `${prototypeInstructions(variant)}You are an agent.` },
      { role: 'user', content: 'Task: Read every page of the document.' },
    ]
    for (let i = 0; i < steps; i++) {
      const res = await model.complete({ protocol: 'native', messages, tools, timeoutMs: 60_000 })
      if (!res.toolCalls?.length) return undefined
      if (res.toolCalls[0]!.function.name === FINAL_ANSWER) {
        JSON.parse(res.toolCalls[0]!.function.arguments)
        return undefined
      }
      messages.push({ role: 'assistant', content: res.text ?? null, tool_calls: res.toolCalls })
      for (const call of res.toolCalls) {
        JSON.parse(call.function.arguments)
        messages.push({ role: 'tool', tool_call_id: call.id, content: OBSERVATION })
      }
    }
    throw new Error('native prototype did not finish')
  }

type CpuUsage = () => { user: number; system: number }
const nodeProcess = (globalThis as { process?: { cpuUsage: CpuUsage; threadCpuUsage?: CpuUsage } })
  .process

/** CPU of the whole process: every thread, the compiler's and the collector's included. */
function cpuMicros(): number {
  if (!nodeProcess) throw new Error('benchKernel needs Node: it reads process.cpuUsage()')
  const u = nodeProcess.cpuUsage()
  return u.user + u.system
}

/** CPU of the thread running the loop alone (Node 23.9 and later), else NaN. */
function mainThreadMicros(): number {
  const u = nodeProcess?.threadCpuUsage?.()
  return u ? u.user + u.system : NaN
}

/** One loop's runs of one case: runs one to the end, and keeps the last for its sizes. */
class Runner {
  last: { model: BenchModel; kernelBytes: number | undefined } | undefined
  constructor(
    readonly protocol: Protocol,
    readonly loop: Loop,
    readonly steps: number,
    readonly variant: Variant,
  ) {}

  async once(): Promise<void> {
    const model = new BenchModel(this.protocol, this.steps, this.variant)
    const kernelBytes = await this.loop(model, this.steps)
    if (model.seen.length !== this.steps) {
      throw new Error(`expected ${this.steps} model calls, got ${model.seen.length}`)
    }
    this.last = { model, kernelBytes }
  }

  /** CPU µs per run of `runs` runs, the clock read once before and once after. */
  async batch(runs: number): Promise<number> {
    const start = cpuMicros()
    for (let k = 0; k < runs; k++) await this.once()
    return (cpuMicros() - start) / runs
  }

  figures(cpuUs: number): Figures {
    const kernelBytes = this.last!.kernelBytes
    return {
      cpuUs,
      requestBytes: this.last!.model.requestBytes(),
      ...(kernelBytes ? { kernelBytes } : {}),
    }
  }
}

interface CaseFigures {
  protocol: Protocol
  variant: Variant
  steps: number
  kernel: Figures
  prototype: Figures
  /** Kernel CPU µs per step over the first COLD_STEPS steps of a case (JIT still warming). */
  coldUs: number
  /** The previous release's kernel, measured side by side (plain cases, when given). */
  previous?: Figures
}

/** One protocol and size: its two loops, and how many runs hold about SAMPLE_MS of CPU. */
interface Case {
  protocol: Protocol
  variant: Variant
  steps: number
  kernel: Runner
  prototype: Runner
  kernelRuns: number
  prototypeRuns: number
  coldUs: number
  previous?: Runner
  previousRuns: number
  least: { kernel: number; prototype: number; previous: number }
}

/**
 * Every case's loops warmed for WARMUP_STEPS each, then ROUNDS rounds that measure one batch of
 * each loop of every case, so each case's batches are spread over the whole measurement instead
 * of one stretch of it. A batch holds about SAMPLE_MS of CPU (process.cpuUsage costs about 2 µs,
 * as much as a whole step of the native prototype, so it is read per batch, not per run).
 */
async function measureAll(method: Method, previous?: KernelApi): Promise<CaseFigures[]> {
  const { warmupSteps, rounds } = method
  const cases: Case[] = []
  const runsFor = (cpuUs: number) => Math.max(1, Math.round((SAMPLE_MS * 1000) / cpuUs))
  for (const protocol of ['text', 'native'] as const) {
    for (const variant of VARIANTS) {
      for (const steps of SIZES) {
        const prototype = (protocol === 'text' ? textPrototype : nativePrototype)(variant)
        const kernel = new Runner(protocol, kernelLoop(protocol, variant), steps, variant)
        const proto = new Runner(protocol, prototype, steps, variant)
        const warmRuns = Math.ceil(warmupSteps / steps)
        const coldRuns = Math.min(warmRuns - 1, Math.ceil(COLD_STEPS / steps))
        const coldUs = (await kernel.batch(coldRuns)) / steps
        const kernelRun = await kernel.batch(warmRuns - coldRuns)
        const protoRun = await proto.batch(warmRuns)
        // The agent cases need agents, which the previous release's kernel did not have.
        const prev =
          previous && variant === 'plain'
            ? new Runner(protocol, kernelLoop(protocol, variant, previous), steps, variant)
            : undefined
        const prevRun = prev ? await prev.batch(warmRuns) : 0
        cases.push({
          protocol,
          variant,
          steps,
          kernel,
          prototype: proto,
          kernelRuns: runsFor(kernelRun),
          prototypeRuns: runsFor(protoRun),
          coldUs,
          ...(prev ? { previous: prev } : {}),
          previousRuns: runsFor(prevRun),
          least: { kernel: Infinity, prototype: Infinity, previous: Infinity },
        })
      }
    }
  }
  for (let r = 0; r < rounds; r++) {
    for (const c of cases) {
      c.least.kernel = Math.min(c.least.kernel, await c.kernel.batch(c.kernelRuns))
      c.least.prototype = Math.min(c.least.prototype, await c.prototype.batch(c.prototypeRuns))
      if (c.previous)
        c.least.previous = Math.min(c.least.previous, await c.previous.batch(c.previousRuns))
    }
  }
  return cases.map((c) => ({
    protocol: c.protocol,
    variant: c.variant,
    steps: c.steps,
    kernel: c.kernel.figures(c.least.kernel),
    prototype: c.prototype.figures(c.least.prototype),
    coldUs: c.coldUs,
    ...(c.previous ? { previous: c.previous.figures(c.least.previous) } : {}),
  }))
}

/**
 * A loop of one case, run from the start in the process that calls this (a fresh one), for its
 * first COLD_STEPS steps. `previous` is the previous release's kernel, for `loop: 'previous'`.
 */
export async function coldFigure(c: ColdCase, previous?: KernelApi): Promise<ColdFigures> {
  if (c.loop === 'previous' && !previous) throw new Error('coldFigure: no previous kernel given')
  const loop =
    c.loop === 'prototype'
      ? (c.protocol === 'text' ? textPrototype : nativePrototype)(c.variant)
      : kernelLoop(c.protocol, c.variant, c.loop === 'previous' ? previous : CURRENT)
  const runner = new Runner(c.protocol, loop, c.steps, c.variant)
  const runs = Math.ceil(COLD_STEPS / c.steps)
  const start = cpuMicros()
  const mainStart = mainThreadMicros()
  await runner.once()
  const firstRun = cpuMicros() - start
  for (let k = 1; k < runs; k++) await runner.once()
  const steps = runs * c.steps
  return {
    us: (cpuMicros() - start) / steps,
    firstRunMs: firstRun / 1000,
    mainUs: (mainThreadMicros() - mainStart) / steps,
  }
}

/** A loop's first COLD_STEPS steps in a fresh process. */
export interface ColdFigures {
  /** Process CPU µs per step over all of them: the cold figure the goal judges. */
  us: number
  /**
   * CPU ms of the first run alone (in `us` too): V8 compiles each function the first time it is
   * called, and the kernel derives what it keeps per isolate (tool schemas, the run head).
   */
  firstRunMs: number
  /**
   * CPU µs per step of the loop's own thread (in `us` too; NaN before Node 23.9): the rest of
   * `us` is V8's compiler and collector threads optimizing and collecting in the background.
   */
  mainUs: number
}

export interface ColdCase {
  protocol: Protocol
  variant: Variant
  steps: number
  loop: 'kernel' | 'prototype' | 'previous'
}

/** What bench/kernel-extras.mjs adds to the bench when `npm run bench` runs it. */
export interface KernelExtras {
  /** One case's loop over its first COLD_STEPS steps, each in a fresh process. */
  cold?: (c: ColdCase) => Promise<ColdFigures>
  /** The kernel of an earlier commit, built from git history, and which commit it is. */
  previous?: { label: string; api: KernelApi }
}

const fmt = (n: number, digits = 1) => n.toFixed(digits).padStart(9)

/** How much to warm up and measure; the defaults are the benchmark's. */
export interface Method {
  warmupSteps: number
  rounds: number
}

/**
 * Runs the benchmark and returns a printable report. A smaller `method` gives the same report
 * from less work, with figures that mean little (test/node/benches.test.ts checks the report).
 */
export async function benchKernel(
  method: Method = { warmupSteps: WARMUP_STEPS, rounds: ROUNDS },
  extras: KernelExtras = {},
): Promise<string> {
  const lines: string[] = []
  const verdicts: string[] = []
  const colds: string[] = []
  lines.push(
    'kernel benchmark: scripted zero-latency model, one trivial tool, 1 KiB observations,',
    `CPU from process.cpuUsage() after ${method.warmupSteps / 1000}k steps of warm-up per loop: least of ${method.rounds} batches`,
    `of about ${SAMPLE_MS} ms, in rounds that measure every case's kernel and prototype in turn`,
    '',
    `agent cases: ${(INSTRUCTIONS.length / 1024).toFixed(1)} KiB of instructions and an output schema (the same goals)`,
    '',
    'protocol     steps  loop        µs/step   µs/KiB-req   KiB-req   ns/kernel-byte',
  )
  const measured = await measureAll(method, extras.previous?.api)
  const coldLines: string[] = []
  for (const protocol of ['text', 'native'] as const) {
    for (const variant of VARIANTS) {
      const goal = protocol === 'text' ? GOAL_TEXT : GOAL_NATIVE
      const label = variant === 'agent' ? `${protocol}+agent` : protocol
      const perKiB: number[] = []
      for (const steps of SIZES) {
        const found = measured.find(
          (m) => m.protocol === protocol && m.variant === variant && m.steps === steps,
        )!
        const { kernel: k, prototype: p, coldUs } = found
        colds.push(`${label} ${steps} steps: ${coldUs.toFixed(1)} µs/step`)
        const kStep = k.cpuUs / steps
        const pStep = p.cpuUs / steps
        const kKiB = k.cpuUs / (k.requestBytes / 1024)
        const pKiB = p.cpuUs / (p.requestBytes / 1024)
        perKiB.push(kKiB)
        const nsPerByte = k.kernelBytes ? (k.cpuUs * 1000) / k.kernelBytes : NaN
        lines.push(
          `${label.padEnd(12)} ${String(steps).padStart(5)}  kernel   ${fmt(kStep)} ${fmt(kKiB, 2)}    ${fmt(k.requestBytes / 1024, 0)}   ${fmt(nsPerByte, 2)}`,
          `${''.padEnd(12)} ${''.padStart(5)}  prototype${fmt(pStep)} ${fmt(pKiB, 2)}    ${fmt(p.requestBytes / 1024, 0)}`,
          `${''.padEnd(12)} ${''.padStart(5)}  ratio    ${fmt(kStep / pStep, 2)}x${fmt(kKiB / pKiB, 2)}x`,
        )
        const ratio = kStep / pStep
        verdicts.push(
          verdictLine(
            { 'kernel µs/step': kStep },
            () => kStep <= GOAL_US_PER_STEP,
            `${label} ${steps} steps: kernel ${kStep.toFixed(1)} µs/step (goal ≤ ${GOAL_US_PER_STEP} µs)`,
          ),
          verdictLine(
            { 'kernel µs/step': kStep, 'prototype µs/step': pStep },
            () => ratio <= goal,
            `${label} ${steps} steps: kernel ${ratio.toFixed(2)}x its prototype per step (goal ≤ ${goal}x)`,
          ),
        )
        if (found.previous && extras.previous) {
          const prevStep = found.previous.cpuUs / steps
          const r = kStep / prevStep
          lines.push(
            `${''.padEnd(12)} ${''.padStart(5)}  previous${fmt(prevStep)}   (${extras.previous.label})`,
          )
          verdicts.push(
            verdictLine(
              { 'kernel µs/step': kStep, 'previous µs/step': prevStep },
              () => r <= GOAL_PREVIOUS,
              `${label} ${steps} steps: kernel ${r.toFixed(2)}x the previous release's per step, warm (goal ≤ ${GOAL_PREVIOUS}x)`,
            ),
          )
        }
        if (extras.cold) {
          const kCold = await extras.cold({ protocol, variant, steps, loop: 'kernel' })
          const pCold = await extras.cold({ protocol, variant, steps, loop: 'prototype' })
          const r = kCold.us / kStep
          coldLines.push(
            `${label.padEnd(12)} ${String(steps).padStart(5)}  ${fmt(kCold.us)} ${fmt(kStep)} ${fmt(r, 2)}x ${fmt(pCold.us)} ${fmt(kCold.us / pCold.us, 2)}x ${fmt(kCold.firstRunMs)} ${fmt(kCold.mainUs)}`,
          )
          verdicts.push(
            verdictLine(
              { 'cold µs/step': kCold.us, 'warm µs/step': kStep },
              () => r <= GOAL_COLD,
              `${label} ${steps} steps: kernel cold ${kCold.us.toFixed(1)} µs/step, ${r.toFixed(2)}x warm (goal ≤ ${GOAL_COLD}x)`,
            ),
          )
          if (found.previous && extras.previous) {
            // The previous release measured the same way: how far its cold figure was from its warm one.
            const prevStep = found.previous.cpuUs / steps
            const prev = await extras.cold({ protocol, variant, steps, loop: 'previous' })
            coldLines.push(
              `${''.padEnd(12)} ${''.padStart(5)}  ${fmt(prev.us)} ${fmt(prevStep)} ${fmt(prev.us / prevStep, 2)}x ${`previous (${extras.previous.label})`.padStart(20)} ${fmt(prev.firstRunMs)} ${fmt(prev.mainUs)}`,
            )
          }
        }
      }
      const growth = perKiB[1]! / perKiB[0]!
      verdicts.push(
        verdictLine(
          {
            [`µs/KiB at ${SIZES[0]} steps`]: perKiB[0],
            [`µs/KiB at ${SIZES[1]} steps`]: perKiB[1],
          },
          () => growth <= GOAL_GROWTH,
          `${label}: µs/KiB at ${SIZES[1]} steps is ${growth.toFixed(2)}x the ${SIZES[0]}-step figure (goal ≤ ${GOAL_GROWTH}x)`,
        ),
      )
    }
  }
  if (coldLines.length) {
    lines.push(
      '',
      `cold: each loop's first ${COLD_STEPS / 1000}k steps, each case and loop in a fresh Node process (µs/step of process CPU);`,
      'first ms: CPU ms of the first run alone (each function compiled on its first call), in the cold figure too;',
      "main µs: the loop's own thread's µs/step; the rest of the cold figure is V8's compiler and GC threads",
      `${'protocol'.padEnd(12)} ${'steps'.padStart(5)}  ${['kernel', 'warm', 'cold/warm', 'prototype', 'k/proto', 'first ms', 'main µs'].map((h, i) => h.padStart(i === 2 || i === 4 ? 10 : 9)).join(' ')}`,
      ...coldLines,
    )
  } else {
    lines.push(
      '',
      `cold: the kernel's first ${COLD_STEPS / 1000}k steps of each case (in this process: only the first case starts cold)`,
      ...colds.map((c) => `  ${c}`),
    )
  }
  const parse = await benchParse()
  lines.push(...parse.lines, '', ...verdicts, ...parse.verdicts)
  return lines.join('\n')
}
