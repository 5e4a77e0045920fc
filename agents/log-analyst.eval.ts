import { defineEval } from './define-eval'

/** The demo's log reader (MODEL=demo; docs/evals.md). */
export default defineEval({
  agent: 'log_analyst',
  cases: [
    {
      name: 'finds-the-pool-exhaustion',
      task: 'Read the order service logs for errors since 14:00 UTC: the dominant error, when it began, what it points at.',
      expect: {
        toolsCalled: [{ name: 'search_logs', args: { service: 'order' } }],
        toolsNotCalled: ['rollback_deploy'],
        answerContains: ['in use 10/10, max 10', '14:05'],
        maxSteps: 2,
      },
    },
  ],
})
