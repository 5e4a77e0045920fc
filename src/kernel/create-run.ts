import { DEFAULT_BUDGET, type Budget } from './budget'
import type { ConfirmPolicy } from './confirm'
import { RUN_STATE_VERSION, type RunState } from './state'

export interface NewRunInput {
  id?: string
  task: string
  tools: string[]
  protocol?: 'auto' | 'text' | 'native'
  budget?: Partial<Budget>
  policy?: ConfirmPolicy
  now?: number
}

/** A fresh run in the `think` phase. */
export function createRunState(input: NewRunInput): RunState {
  const protocolSetting = input.protocol ?? 'auto'
  return {
    v: RUN_STATE_VERSION,
    id: input.id ?? crypto.randomUUID(),
    task: input.task,
    protocol: protocolSetting === 'text' ? 'text' : 'native',
    protocolSetting,
    tools: input.tools,
    budget: { ...DEFAULT_BUDGET, ...input.budget },
    policy: input.policy ?? { mode: 'ask' },
    phase: 'think',
    steps: [],
    usage: { promptTokens: 0, completionTokens: 0, estimated: false, modelCalls: 0 },
    activeMs: 0,
    consecutiveErrors: 0,
    consecutiveFormatErrors: 0,
    cancelRequested: false,
    createdAt: input.now ?? Date.now(),
  }
}
