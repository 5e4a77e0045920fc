import { defineEval } from './define-eval'

/** The default agent with the deployment's tools (MODEL=script: the scripts are the tasks). */
export default defineEval({
  agent: 'default',
  model: 'script',
  cases: [
    {
      name: 'calculates',
      task: 'call calculator with {"expression": "6*7"}, then finish with The answer is 42.',
      expect: {
        toolOrder: [{ name: 'calculator', args: { expression: '6*7' } }],
        answerContains: ['42'],
        maxSteps: 2,
      },
    },
    {
      name: 'side-effect-denied-by-default',
      task: 'call rollback_deploy with {"service": "order", "to_version": "v2.13.2", "reason": "eval"}',
      expect: {
        toolsCalled: ['rollback_deploy'],
        answerMatches: ['denied'],
        maxSteps: 2,
      },
    },
    {
      name: 'follows-up-in-a-conversation',
      task: 'finish with The order service is back to 0.1% errors.',
      followUps: [
        'call calculator with {"expression": "0.1*3"}, then finish with Three times that is 0.3%.',
      ],
      expect: { toolsCalled: ['calculator'], answerContains: ['0.3%'], maxSteps: 2 },
    },
  ],
})
