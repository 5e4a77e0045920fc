import { defineEval } from './define-eval'

const INCIDENT =
  'The order service 5xx rate jumped from 0.1% to 12%. Find the root cause and fix it.'

/** The on-call demo (MODEL=demo replays the recorded investigation; docs/evals.md). */
export default defineEval({
  agent: 'oncall',
  cases: [
    {
      name: 'rolls-back-when-approved',
      task: INCIDENT,
      approvals: { rollback_deploy: 'approve' },
      expect: {
        toolOrder: [
          'query_metrics',
          'ask_log_analyst',
          { name: 'read_repo_file', args: { path: 'CHANGELOG.md' } },
          { name: 'rollback_deploy', args: { service: 'order', to_version: 'v2.13.2' } },
        ],
        answerContains: ['v2.14.0', 'rolled the order service back'],
        answerMatches: ['max_connections from 50 to 10'],
        maxSteps: 5,
      },
    },
    {
      name: 'reports-without-acting-when-denied',
      task: INCIDENT,
      approvals: { rollback_deploy: 'deny' },
      expect: {
        toolsCalled: [{ name: 'query_metrics', args: { service: 'order', metric: 'error_rate' } }],
        answerContains: ['Action taken: none', 'NOT performed'],
        maxSteps: 5,
      },
    },
  ],
})
