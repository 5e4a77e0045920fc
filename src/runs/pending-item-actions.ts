import type { PendingApprovalBody } from '../api/response-schemas'

type ItemActions = Pick<PendingApprovalBody, 'actions' | 'href'>

/**
 * What a person may do with a pending item and where to send it (docs/human-in-the-loop.md#the-inbox):
 * an approval is approved or denied at its approvals URL (and edited, when it has an edit
 * schema); a question is answered or declined at its questions URL; an MCP server's connect item
 * is granted through the single-use link its server's link route makes for the person
 * (`POST` with `{ runId, itemId }`); another connect item by following `ask.details.url`.
 */
export function itemActions(
  runId: string,
  callId: string,
  item: Pick<PendingApprovalBody, 'kind' | 'editSchema' | 'ask'>,
): ItemActions {
  switch (item.kind) {
    case 'approval':
      return {
        actions: item.editSchema ? ['approve', 'deny', 'edit'] : ['approve', 'deny'],
        href: `/v1/runs/${runId}/approvals/${callId}`,
      }
    case 'question':
      return { actions: ['answer', 'decline'], href: `/v1/runs/${runId}/questions/${callId}` }
    case 'connect': {
      const server = item.ask?.details?.server
      const link =
        typeof server === 'string' ? `/v1/connections/${encodeURIComponent(server)}/link` : null
      return { actions: ['connect'], href: link }
    }
  }
}
