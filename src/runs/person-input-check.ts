import { argsHash } from '../kernel/canonical'
import { findCall } from '../kernel/calls'
import { answerProblems, checkEditedArgs } from '../kernel/person-input'
import type { ToolRegistry } from '../kernel/registry'
import { formAnswerProblems } from '../mcp/index'
import type { RunState } from '../kernel/state'
import type { DecideRequest, DecideResponse } from './types'

type Refusal = Extract<DecideResponse, { ok: false }>

/**
 * What a person sent with a decision, checked before it is recorded
 * (docs/human-in-the-loop.md): a question's answer against its choices or schema, edited
 * arguments against the run's tool, strictly, then hashed. `registry` is asked only for an edit.
 */
export async function checkPersonInput(
  state: RunState,
  input: DecideRequest,
  registry: () => ToolRegistry,
): Promise<{ ok: true; edit?: { args: Record<string, unknown>; hash: string } } | Refusal> {
  const call = findCall(state, input.callId)!.call
  if (call.approval!.kind === 'question' && input.decision === 'approve') {
    const ask = call.approval!.ask
    // A server's form (docs/mcp.md#questions-from-servers): its defaults fill what is left out.
    const problems =
      ask?.schema && isMcpForm(ask.details)
        ? formAnswerProblems(ask.schema, input.answer)
        : answerProblems(ask, input.answer)
    if (problems.length) {
      const message = `the answer does not fit call ${call.id}'s question: ${problems.join('; ')}`
      return { ok: false, code: 'invalid_answer', message, problems }
    }
  }
  if (!input.args || input.decision !== 'approve') return { ok: true }
  const tools = registry()
  const tool = tools.get(call.name)
  if (!tool) {
    const message = `tool ${call.name} is no longer offered to run ${state.id}; approve or deny the call as it is`
    return { ok: false, code: 'not_editable', message }
  }
  const edited = checkEditedArgs(tool, tools.jsonSchema(tool.name), input.args)
  if (!edited.ok) return edited
  return { ok: true, edit: { args: edited.args, hash: await argsHash(call.name, edited.args) } }
}

/** The item's details say it is an MCP server's form question. */
function isMcpForm(details: Record<string, unknown> | null): boolean {
  const mcp = details?.mcp as { mode?: unknown } | undefined
  return mcp?.mode === 'form'
}
