import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
// Imported through the package name, as a user of the library would (package.json `exports`).
import * as kernel from 'edgeloop/kernel'
import { defineTool, react, type Model, type ModelRequest } from 'edgeloop/kernel'

/** A two-turn model: calls `add`, then answers with what the tool returned. */
class TwoTurnModel implements Model {
  readonly name = 'two-turn'
  readonly requests: ModelRequest[] = []
  async complete(request: ModelRequest) {
    this.requests.push(request)
    if (this.requests.length === 1) {
      return {
        toolCalls: [
          {
            id: 'call_1',
            type: 'function' as const,
            function: { name: 'add', arguments: '{"a":2,"b":3}' },
          },
        ],
        finishReason: 'tool_calls' as const,
      }
    }
    const last = request.messages[request.messages.length - 1]!
    return {
      // The tool's JSON, inside the frame every observation reaches the model in.
      text: `The sum is ${JSON.parse(/\n(.*)\n/.exec(String(last.content))![1]!).sum}.`,
      finishReason: 'stop' as const,
    }
  }
}

/**
 * Every value `edgeloop/kernel` exports, by name. A library's surface changes only on purpose:
 * adding or removing an export means changing this list, and nothing of the service (RunStore,
 * the routes, Slack) may appear in it.
 */
const KERNEL_EXPORTS = [
  'BudgetSchema',
  'CONFIRM_MODES',
  'CPU_NS_PER_BYTE',
  'DEFAULT_BUDGET',
  'DEFAULT_TOOL_TIMEOUT_MS',
  'FINISH',
  'KernelUsageError',
  'MAX_CALLS_PER_STEP',
  'MAX_LOOSE_JSON_CHARS',
  'MAX_SLICE_CHARS',
  'MIN_SECRET_LENGTH',
  'MemoryObservationStore',
  'ModelError',
  'READ_OBSERVATION',
  'RUN_ID_PATTERN',
  'RUN_STATE_VERSION',
  'RenderCache',
  'STOP_REASONS',
  'Slice',
  'TEXT_PROTOCOL_FORMAT',
  'TOOL_NAME_PATTERN',
  'ToolRegistry',
  'UNPARSABLE',
  'advance',
  'approxTokens',
  'argsHash',
  'buildRequest',
  'canonicalJson',
  'continueConversation',
  'conversationHandle',
  'conversationView',
  'createRedactor',
  'createRunState',
  'decideApproval',
  'defineTool',
  'dispatch',
  'expireApprovals',
  'findCall',
  'followUpSource',
  'narrowPolicy',
  'nextApprovalExpiry',
  'parseArgsStrict',
  'parseArgsTolerant',
  'parseOutput',
  'parseRunState',
  'pendingApprovals',
  'react',
  'readObservationTool',
  'runSlice',
  'sameJson',
  'scanJsonObjects',
  'sliceForCpuMs',
  'splitConversationHandle',
  'toRunResult',
  'toolShapes',
  'transition',
  'truncateObservation',
  'verdictFor',
  'DECIDE_REFUSALS',
  'GUARDRAIL_POINTS',
  'GuardrailRecordSchema',
  'PENDING_KINDS',
  'answerLength',
  'answerProblems',
  'checkEditedArgs',
  'createSplitRedactor',
  'decidePolicy',
  'injectionFound',
  'itemHash',
  'judgedGuardrail',
  'personNeeded',
  'piiRedaction',
  'promptInjection',
  'redactPii',
  'secretsGuardrail',
  'topicAllowList',
]

describe('edgeloop/kernel', () => {
  it('runs a whole react() loop with a tool defined through the package export', async () => {
    const add = defineTool({
      name: 'add',
      description: 'Add two numbers.',
      params: z.object({ a: z.number(), b: z.number() }),
      returns: 'The sum.',
      handler: ({ a, b }) => ({ sum: a + b }),
    })
    const model = new TwoTurnModel()
    const result = await react('What is 2 + 3?', [add], { model, protocol: 'native' })
    expect(result.ok).toBe(true)
    expect(result.stopReason).toBe('finish')
    expect(result.answer).toBe('The sum is 5.')
    expect(model.requests).toHaveLength(2)
  })

  it('exports exactly the kernel, by name, and nothing of the service', () => {
    expect(Object.keys(kernel).sort()).toEqual([...KERNEL_EXPORTS].sort())
  })
})
