import * as z from 'zod/mini'
import { defineAgent } from './define-agent'

/**
 * Sorts an incoming report into a machine-readable ticket: no tools, no side effects, and an
 * answer a webhook caller can route on (`output`), validated against the schema below.
 */
export const triage = defineAgent({
  name: 'triage',
  description: 'Triages an incident or bug report into severity, component and a summary.',
  instructions: `You triage incoming incident and bug reports for the platform team.
Read the report and decide:
- severity: "sev1" (customers cannot use the product), "sev2" (a major feature is broken or
  degraded for many), "sev3" (a minor or cosmetic problem, or one with a workaround);
- component: the part of the system the report is about, in one or two words;
- summary: one sentence an on-call engineer can act on.
Do not guess facts the report does not give; say what is unknown in the summary.`,
  tools: [],
  // Nothing to run: a read-only role whatever CONFIRM_POLICY allows.
  confirm: { mode: 'deny' },
  output: z.object({
    severity: z.enum(['sev1', 'sev2', 'sev3']),
    component: z.string().check(z.minLength(1), z.maxLength(60)),
    summary: z.string().check(z.minLength(1), z.maxLength(400)),
  }),
})
