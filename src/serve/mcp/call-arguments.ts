import * as z from 'zod/mini'
import { safeParse } from 'zod/v4/core'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { RUN_ID_PATTERN } from '../../kernel/names'
import { describeIssues } from '../../validation/describe-issues'

/** An agent tool's arguments (agent-tools.ts's AGENT_INPUT_SCHEMA), as POST /v1/runs bounds a task. */
const CallArguments = z.strictObject({
  task: z.string().check(z.trim(), z.minLength(1), z.maxLength(20_000)),
  conversation: z.optional(
    z.string().check(z.regex(RUN_ID_PATTERN, 'must be a run id (run_<32 hex>)')),
  ),
})
export type CallArguments = z.infer<typeof CallArguments>

/** The arguments of a call of agent `tool`, or an InvalidParams error listing every problem. */
export function callArguments(tool: string, args: unknown): CallArguments {
  const parsed = safeParse(CallArguments, args ?? {})
  if (parsed.success) return parsed.data
  const problems = describeIssues(parsed.error.issues, args)
  throw new McpError(
    ErrorCode.InvalidParams,
    `arguments of ${tool} are invalid: ${problems.join('; ')}`,
    { code: 'invalid_arguments', problems },
  )
}
