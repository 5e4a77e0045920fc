import { loadConfig } from '../config'
import type { EnvVars } from '../env-vars'
import { EdgeloopError } from '../errors/edgeloop-error'
import { findCall } from '../kernel/calls'
import {
  carveBudget,
  waitingOnChild,
  type ChildOutcome,
  type ChildRuns,
} from '../kernel/delegation'
import { noUsage, type RunState } from '../kernel/state'
import { sha256Hex } from '../security/sha256'
import type { ApiRunResult } from './api-result'
import type { RunStorage } from './storage'
import { inheritedOwner } from './run-owner'
import { runStub, type RunInfo, type SlackCards } from './types'
import { startRun, StartError, type StartEnv } from './start'

/**
 * A run's children (docs/agents.md#delegation): each delegated call starts one child run in an
 * object of its own, whose id comes from the parent's id and the call's, so every retry of the
 * start (after a crash between the `started` record and the child) finds the same child. The
 * child's end reaches the parent twice over: the child's outbox tells it (`childFinished`), and
 * the parent's alarm asks the child while it waits (`pollChildren`). Either stores the outcome
 * beside the parent's state, where the kernel reads it (`ChildRuns.outcome`).
 */

/** How often a waiting parent asks its unfinished children, should a report be lost. */
export const CHILD_POLL_MS = 60_000

const outcomeKey = (callId: string) => `child:${callId}`

/** The id of the child run the call `callId` of run `parentId` starts (always the same). */
export async function childRunId(parentId: string, callId: string): Promise<string> {
  return `run_${(await sha256Hex(`edgeloop-child:${parentId}:${callId}`)).slice(0, 32)}`
}

type RunsEnv = EnvVars & { RUNS?: DurableObjectNamespace }

// The same env object, not a copy: the deployment's settings are read once per env (loadConfig).
const hasRuns = (env: RunsEnv): env is StartEnv => env.RUNS !== undefined

/** The kernel's `Deps.children` for one run. */
export function childRuns(
  env: RunsEnv,
  storage: RunStorage,
  info: RunInfo | undefined,
  slackThread: () => string | undefined = () => undefined,
): ChildRuns {
  return {
    async start(call, spec, parent) {
      const config = loadConfig(env)
      const depth = (parent.parent?.depth ?? 0) + 1
      if (depth > config.maxDelegationDepth) {
        return {
          ok: false,
          error: `this run is ${depth - 1} delegations deep and MAX_DELEGATION_DEPTH is ${config.maxDelegationDepth}: it cannot start a child run; do the task with your own tools`,
        }
      }
      const agent = config.agents.find((a) => a.name === spec.agent)
      if (!agent) return { ok: false, error: notOffered(spec.agent) }
      const carved = carveBudget(parent, agent.budget)
      if (!carved.ok) return carved
      if (!hasRuns(env)) return { ok: false, error: 'the Worker has no RUNS binding' }
      const id = await childRunId(parent.id, call.id)
      const child = { runId: id, agent: agent.name }
      const slackCards = slackCardsFor(info, slackThread(), parent.agent.name)
      try {
        // Everything else of the start is every run's (runs/start/).
        await startRun(env, {
          task: typeof call.args.task === 'string' ? call.args.task : '',
          agent: agent.name,
          // The child acts for whoever asked the parent, and belongs to the parent's owner.
          requestedBy: info?.requestedBy ?? 'api',
          owner: info ? inheritedOwner(info).owner : null,
          delegation: {
            id,
            parent: { runId: parent.id, callId: call.id, agent: parent.agent.name, depth },
            budget: carved.budget,
            ...(slackCards ? { slackCards } : {}),
          },
        })
      } catch (err) {
        if (err instanceof StartError) return { ok: false, error: refusalOf(err, id, agent.name) }
        // Ours (a setting gone bad) is not a lost call: the slice fails as before the start.
        if (err instanceof EdgeloopError) throw err
        // A call that failed on the way may still have created the child (only its answer was
        // lost), which then runs and reports: the run waits for it like any child, and the poll
        // finds it, or finds that it was never created.
      }
      return { ok: true, child }
    },
    outcome(call) {
      return storage.getValue<ChildOutcome>(outcomeKey(call.id))
    },
  }
}

/**
 * A child of a Slack-started run posts its approval cards in the thread of the run that asked
 * (which got the same place from its own parent); it posts nothing else there.
 */
function slackCardsFor(
  info: RunInfo | undefined,
  thread: string | undefined,
  parentAgent: string,
): SlackCards | undefined {
  const origin = info?.slack ?? info?.slackCards
  if (!origin) return undefined
  const { parentAgent: _grandparent, ...place } = { parentAgent, ...origin }
  const threadTs = origin.threadTs ?? thread
  return { ...place, ...(threadTs ? { threadTs } : {}), parentAgent }
}

const notOffered = (agent: string) => `agent "${agent}" is not offered by this deployment`

/** A refused start as the parent's model reads it (the observation of its delegated call). */
function refusalOf(err: StartError, id: string, agent: string): string {
  if (err.code === 'run_deleted') return `child run ${id} was deleted`
  if (err.code === 'agent_not_found') return notOffered(agent)
  return err.message
}

/** What a finished child's trace gives its parent. */
export function childOutcome(result: ApiRunResult): ChildOutcome {
  const u = result.usage
  return {
    runId: result.id,
    agent: result.agent.name,
    ok: result.ok,
    answer: result.answer,
    output: result.output ?? null,
    stopReason: result.stopReason,
    error: result.error ?? null,
    usage: {
      promptTokens: u.promptTokens,
      completionTokens: u.completionTokens,
      estimated: u.estimated,
      costUsd: u.costUsd ?? null,
      cachedPromptTokens: u.cachedPromptTokens,
      modelCalls: u.modelCalls,
    },
    activeMs: u.activeMs,
  }
}

/**
 * Stores a child's outcome for the call that started it (the first report wins; a report for a
 * call or child the run does not have is refused). Returns whether the run knows that child.
 */
export function recordChildOutcome(
  state: RunState,
  storage: RunStorage,
  callId: string,
  outcome: ChildOutcome,
): boolean {
  const found = findCall(state, callId)
  if (found?.call.child?.runId !== outcome.runId) return false
  if (storage.getValue(outcomeKey(callId)) === undefined) {
    storage.setValue(outcomeKey(callId), outcome)
  }
  return true
}

/** Whether a child the run waits for has ended (its outcome is stored): then it should wake. */
export function childEnded(state: RunState, storage: RunStorage): boolean {
  const calls = state.steps.at(-1)?.calls ?? []
  return calls.some((c) => waitingOnChild(c) && storage.getValue(outcomeKey(c.id)) !== undefined)
}

/**
 * Asks each unfinished child of the run's last step how it stands, and stores the outcome of
 * those that ended (the backup of the child's own report). A child that no longer exists ended
 * without an answer.
 */
export async function pollChildren(
  state: RunState,
  storage: RunStorage,
  runs: DurableObjectNamespace,
): Promise<void> {
  const calls = state.steps.at(-1)?.calls ?? []
  for (const call of calls) {
    if (!waitingOnChild(call) || storage.getValue(outcomeKey(call.id)) !== undefined) continue
    const { runId, agent } = call.child!
    const view = await runStub(runs, runId).get()
    if (view === null) {
      recordChildOutcome(state, storage, call.id, {
        runId,
        agent,
        ok: false,
        answer: '',
        output: null,
        stopReason: null,
        error: 'the child run does not exist (it was deleted, or never created)',
        usage: noUsage(),
        activeMs: 0,
      })
    } else if (view.status === 'succeeded' || view.status === 'failed') {
      recordChildOutcome(state, storage, call.id, childOutcome(view.result))
    }
  }
}
