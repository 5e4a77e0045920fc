import * as z from 'zod/mini'
import { defineEval } from './define-eval'

/**
 * The triage agent's structured answer. MODEL=script: each task is the script of the model's
 * reply (docs/trying-tools.md), so these cases check the run machine's handling of the answer
 * (its schema), not a model's judgement; run them with --model for that.
 */
export default defineEval({
  agent: 'triage',
  model: 'script',
  cases: [
    {
      name: 'answers-a-valid-ticket',
      task: 'finish with {"severity": "sev2", "component": "checkout", "summary": "Card payments time out for about a third of customers since 09:10 UTC."}',
      expect: {
        output: {
          severity: 'sev2',
          component: 'checkout',
          summary: 'Card payments time out for about a third of customers since 09:10 UTC.',
        },
        outputSchema: z.looseObject({ severity: z.enum(['sev1', 'sev2', 'sev3']) }),
        toolsNotCalled: ['rollback_deploy'],
        maxSteps: 1,
      },
    },
    {
      name: 'keeps-a-cosmetic-report-low',
      task: 'finish with {"severity": "sev3", "component": "docs site", "summary": "A typo on the pricing page; nothing is broken."}',
      expect: { outputMatches: { severity: 'sev3' }, maxSteps: 1 },
    },
    {
      name: 'refuses-a-ticket-outside-its-schema',
      task: 'finish with {"severity": "urgent", "component": "checkout", "summary": "Payments are slow."}',
      expect: { ok: false, stopReason: 'output_invalid' },
    },
  ],
})
