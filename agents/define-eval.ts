/**
 * An agent's eval cases (docs/evals.md): `agents/<name>.eval.ts` beside `agents/<name>.ts`, run by
 * `npm run eval`. Each case is a task and what a good run of it does; `npm run eval` runs every
 * case k times through the Worker and checks each run against its expectations. The shapes are
 * checked when the file is loaded (src/evals/case-schema.ts): a wrong field names the file and
 * the field.
 */
export interface EvalDefinition {
  /** The agent the cases run (an agent of agents/catalog.ts). */
  agent: string
  /** A model for every case of the file (in the eval deployment's MODEL_ALLOWLIST). */
  model?: string
  cases: readonly EvalCase[]
}

/** What a side-effecting call gets when its approval is asked: the case decides, never a person. */
export type ApprovalAnswer = 'approve' | 'deny'

export interface EvalCase {
  /** Unique in the file: what the report and `--baseline` compare by. */
  name: string
  /** The run's task (under MODEL=script, the script itself: docs/trying-tools.md). */
  task: string
  /**
   * A conversation: once the task's run ends, each follow-up is a run that continues the one
   * before (`"continue"`, docs/http-api.md#conversations). The expectations judge the last run.
   */
  followUps?: readonly string[]
  /** Free-form labels for the report (owner, ticket, tags). */
  metadata?: Record<string, string>
  /** Overrides the file's model. */
  model?: string
  /** Narrows the agent's tools for the case's runs. */
  tools?: readonly string[]
  /** Budget limits for the case's runs (never above the deployment's). */
  budget?: { maxSteps?: number; maxPromptTokens?: number; maxCostUsd?: number }
  /**
   * How each side-effecting tool's approval is answered, by tool name; a tool not named is
   * denied. Approved calls run the deployment's tool, whose outbound requests only reach the
   * case's `fakes` (never a live host unless `npm run eval -- --live`).
   */
  approvals?: Record<string, ApprovalAnswer>
  /** Answers for the Worker's outbound HTTP (http_get, http_post …), matched by method and URL. */
  fakes?: readonly HttpFake[]
  expect: Expectations
  /** Set by `--from-run`: the recorded run, replayed step by step (docs/evals.md#replay). */
  recording?: unknown
}

export interface HttpFake {
  /** Default `GET`. */
  method?: string
  /** The URL, exactly, or a prefix ending in `*`. */
  url: string
  /** Default 200. */
  status?: number
  /** A string is sent as is; anything else as JSON. */
  body?: unknown
  headers?: Record<string, string>
}

export interface ToolCallExpectation {
  name: string
  /** A subset of the arguments (deep partial match). */
  args?: Record<string, unknown>
}

export interface Expectations {
  /** Whether the run must succeed (`ok`); default true. */
  ok?: boolean
  /** The run's `stopReason`. */
  stopReason?: string
  /** The structured output equals this value exactly. */
  output?: unknown
  /** The structured output contains these fields (deep partial match). */
  outputMatches?: Record<string, unknown>
  /** A zod schema (or a JSON Schema object) the structured output validates against. */
  outputSchema?: unknown
  /** Each of these calls was made (name and argument subset), in any order. */
  toolsCalled?: readonly (string | ToolCallExpectation)[]
  /** These calls were made in this relative order (others may come between). */
  toolOrder?: readonly (string | ToolCallExpectation)[]
  /** None of these tools was called. */
  toolsNotCalled?: readonly string[]
  /** The answer contains each string (case-sensitive). */
  answerContains?: readonly string[]
  /** The answer matches each pattern (a regular expression source, or a RegExp). */
  answerMatches?: readonly (string | RegExp)[]
  maxSteps?: number
  /** Prompt plus completion tokens of the whole run (its children included). */
  maxTokens?: number
  maxCostUsd?: number
  /** A judge model reads the task, the answer and the rubric, and returns a verdict. */
  judge?: JudgeExpectation
}

export interface JudgeExpectation {
  /** What a good answer does: the judge passes or fails the answer against it. */
  rubric: string
  /** The judge's model; default the eval's `--judge-model`, else the deployment's MODEL. */
  model?: string
  /** The judge's own instructions, before the rubric; default: a strict grader. */
  instructions?: string
}

/** Declares an agent's eval cases (one `agents/<name>.eval.ts` per agent). */
export function defineEval(definition: EvalDefinition): Readonly<EvalDefinition> {
  return Object.freeze({ ...definition })
}
