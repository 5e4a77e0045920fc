import { defineEval } from './define-eval'

const TICKET = JSON.stringify({
  severity: 'sev1',
  component: 'payments',
  summary: 'Every payment fails with a 502 since 10:02 UTC.',
})

/** The lead delegates triage to a child run (MODEL=script: the scripts are the tasks). */
export default defineEval({
  agent: 'lead',
  model: 'script',
  cases: [
    {
      name: 'asks-triage-then-answers',
      task: `call ask_triage with ${JSON.stringify({ task: `finish with ${TICKET}` })}, then finish with Severity sev1: payments are down for every customer; triage filed it.`,
      expect: {
        toolsCalled: [{ name: 'ask_triage' }],
        toolsNotCalled: ['ask_default'],
        answerContains: ['sev1'],
        maxSteps: 2,
      },
    },
  ],
})
