/**
 * The error codes each route can answer, by status (docs/http-api.md). /openapi.json lists them
 * as enums; test/api/openapi-complete.test.ts checks every code thrown in src/routes is here.
 */
export type ErrorCodes = Partial<
  Record<
    400 | 401 | 403 | 404 | 405 | 406 | 409 | 410 | 413 | 415 | 429 | 500 | 502 | 503,
    string[]
  >
>

const BODY_400 = [
  'malformed_json',
  'json_too_deep',
  'invalid_encoding',
  'invalid_request',
  'client_disconnected',
]
const AUTH = {
  401: ['unauthorized', 'auth_not_configured', 'invalid_signature'],
  // A method the path does not take (the answer carries Allow).
  405: ['method_not_allowed'],
  500: ['internal_error'],
}
/** Routes only the API token may use: a valid webhook signature is refused with 403. */
const TOKEN_ONLY = { ...AUTH, 403: ['forbidden'] }
const BODY = { 413: ['body_too_large'], 415: ['unsupported_media_type'] }
/** A run that never was, or one that was deleted (docs/operations.md#deletion). */
const GONE = ['run_not_found', 'run_deleted']

/** Why a pending item could not be decided as asked: it left the item as it was. */
const DECIDE_409 = [
  'already_decided',
  'hash_mismatch',
  'not_pending',
  'run_finished',
  'run_cancelling',
  'wrong_kind',
  'approval_expired',
] as const

export const ROUTE_ERRORS = {
  createRun: {
    ...AUTH,
    ...BODY,
    400: [
      ...BODY_400,
      'invalid_idempotency_key',
      'unknown_tools',
      'tools_not_allowed',
      'budget_over_maximum',
      'budget_over_agent',
      'invalid_output_schema',
      'policy_not_allowed',
      'model_not_allowed',
      'invalid_callback_url',
      'callback_unsigned',
      'cost_budget_unavailable',
      'metadata_too_large',
      'invalid_run_id',
      'needs_person',
    ],
    // A webhook signature may start runs but not continue one (that needs runs:read).
    403: ['forbidden'],
    404: ['run_not_found', 'run_deleted', 'agent_not_found'],
    409: ['idempotency_key_reused', 'run_not_finished', 'run_deleted'],
    503: ['misconfigured'],
  },
  listRuns: { ...TOKEN_ONLY, 400: ['invalid_query', 'invalid_cursor'] },
  getRun: { ...TOKEN_ONLY, 404: GONE },
  getTrace: { ...TOKEN_ONLY, 404: GONE },
  exportRun: { ...TOKEN_ONLY, 404: GONE },
  deleteRun: { ...TOKEN_ONLY, 404: ['run_not_found'] },
  getRunApprovals: { ...TOKEN_ONLY, 404: GONE },
  streamRunList: {
    ...TOKEN_ONLY,
    400: ['invalid_after'],
    // Beyond RUN_LIST_STREAMS / EVENT_STREAMS_PER_TOKEN; the answer carries Retry-After.
    429: ['too_many_streams'],
    503: ['misconfigured'],
  },
  streamEvents: {
    ...TOKEN_ONLY,
    400: ['invalid_after'],
    404: GONE,
    // Beyond EVENT_STREAMS_PER_RUN / EVENT_STREAMS_PER_TOKEN; the answer carries Retry-After.
    429: ['too_many_streams'],
    503: ['misconfigured'],
  },
  decideApproval: {
    ...TOKEN_ONLY,
    ...BODY,
    400: [...BODY_400, 'by_not_accepted', 'invalid_args', 'not_editable'],
    403: ['forbidden', 'slack_run'],
    404: [...GONE, 'call_not_found'],
    409: [...DECIDE_409],
  },
  answerQuestion: {
    ...TOKEN_ONLY,
    ...BODY,
    400: [...BODY_400, 'by_not_accepted', 'invalid_answer'],
    403: ['forbidden', 'slack_run'],
    404: [...GONE, 'call_not_found'],
    409: [...DECIDE_409],
  },
  cancelRun: {
    ...TOKEN_ONLY,
    ...BODY,
    400: [...BODY_400, 'by_not_accepted'],
    404: GONE,
    409: ['run_finished'],
  },
  readObservation: { ...TOKEN_ONLY, 404: [...GONE, 'observation_not_found'] },
  listApprovals: { ...TOKEN_ONLY, 400: ['invalid_query', 'invalid_cursor'] },
  // Any valid token; a webhook signature is not one (403).
  whoAmI: TOKEN_ONLY,
  // The full readiness report needs service:read; without credentials it answers the summary.
  readiness: { 401: AUTH[401], 403: ['forbidden'] },
  // Slack request signing, not a token; the body is read (size-limited) before it is verified.
  slack: {
    400: ['invalid_slack_payload', 'invalid_encoding', 'client_disconnected'],
    401: ['auth_not_configured', 'invalid_slack_signature'],
    405: ['method_not_allowed'],
    413: ['body_too_large'],
    500: ['internal_error'],
  },
  listAgents: { ...TOKEN_ONLY, 503: ['misconfigured'] },
  listConnections: TOKEN_ONLY,
  createConnectLink: {
    ...TOKEN_ONLY,
    ...BODY,
    400: BODY_400,
    404: ['not_found', 'connections_not_configured'],
    409: ['not_oauth'],
    503: ['misconfigured'],
  },
  deleteConnection: {
    ...TOKEN_ONLY,
    404: ['not_found', 'connections_not_configured'],
    503: ['misconfigured'],
  },
  // A person's browser and the authorization server: no token; the link or state is the key.
  followConnectLink: {
    404: ['unknown_state', 'connections_not_configured'],
    409: ['already_used', 'not_oauth'],
    410: ['expired', 'server_removed'],
    502: ['authorization_server_failed'],
    503: ['misconfigured'],
  },
  oauthCallback: {
    400: ['invalid_state', 'invalid_request', 'issuer_mismatch'],
    403: ['state_mismatch', 'authorization_denied'],
    404: ['unknown_state', 'connections_not_configured'],
    409: ['already_used', 'not_oauth'],
    410: ['expired', 'server_removed'],
    502: ['authorization_server_failed'],
    503: ['misconfigured'],
  },
  clientMetadata: { 404: ['not_found'] },
  getAgent: { ...TOKEN_ONLY, 404: ['agent_not_found'], 503: ['misconfigured'] },
  // A console file the deployment lacks (built without `npm run build`'s assets).
  consoleFile: { 404: ['console_unavailable'] },
  // The authorization server for served agents (docs/serving.md#authorization).
  servedOAuthMetadata: { 404: ['oauth_not_configured'] },
  oauthAuthorize: {
    400: [
      'invalid_request',
      'invalid_target',
      'unauthorized_client',
      'unsupported_response_type',
      'invalid_scope',
    ],
    404: ['oauth_not_configured'],
  },
  oauthConsent: {
    400: ['invalid_request', 'invalid_scope'],
    401: ['invalid_token'],
    403: ['invalid_scope'],
    404: ['oauth_not_configured'],
    413: ['payload_too_large'],
  },
} satisfies Record<string, ErrorCodes>

/** What every error answers: `{ error: { code, message, details? } }`. */
interface ErrorResponse {
  description: string
  content: { 'application/json': { schema: Record<string, unknown> } }
}

/** An error response whose `code` is one of `codes`. */
export function errorResponses(codes: ErrorCodes): Record<string, ErrorResponse> {
  return Object.fromEntries(
    Object.entries(codes).map(([status, list]) => [
      status,
      jsonError(`Error: ${list.join(', ')}`, {
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'string', enum: list },
            message: { type: 'string', description: 'What went wrong and what to do.' },
            details: { description: 'More about the error, when there is more.' },
          },
        },
      }),
    ]),
  )
}

/**
 * An OAuth error response (RFC 6749 §5.2, `{ error, error_description }`) for each of `statuses`:
 * what the authorization server's endpoints answer, in the shape OAuth clients parse.
 */
export function oauthErrorResponses(
  statuses: number[],
  codes: string[],
): Record<string, ErrorResponse> {
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      jsonError(`OAuth error: ${codes.join(', ')}`, {
        error: { type: 'string', enum: codes },
        error_description: { type: 'string' },
      }),
    ]),
  )
}

function jsonError(description: string, properties: Record<string, unknown>): ErrorResponse {
  return {
    description,
    content: {
      'application/json': { schema: { type: 'object', required: ['error'], properties } },
    },
  }
}
