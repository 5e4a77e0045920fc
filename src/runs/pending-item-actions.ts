import type { PendingApprovalBody } from '../api/response-schemas'

type ItemActions = Pick<PendingApprovalBody, 'actions' | 'href'>

/**
 * What a person may do with a pending item and where to send it (docs/human-in-the-loop.md#the-inbox):
 * an approval is approved or denied at its approvals URL (and edited, when it has an edit
 * schema); a question is answered or declined at its questions URL; a connect item is done by
 * following `ask.details.url`, outside the API.
 */
export function itemActions(
  runId: string,
  callId: string,
  item: Pick<PendingApprovalBody, 'kind' | 'editSchema'>,
): ItemActions {
  switch (item.kind) {
    case 'approval':
      return {
        actions: item.editSchema ? ['approve', 'deny', 'edit'] : ['approve', 'deny'],
        href: `/v1/runs/${runId}/approvals/${callId}`,
      }
    case 'question':
      return { actions: ['answer', 'decline'], href: `/v1/runs/${runId}/questions/${callId}` }
    case 'connect':
      return { actions: ['connect'], href: null }
  }
}
