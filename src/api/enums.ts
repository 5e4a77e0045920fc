/** What the API says of a run as a whole (its phase and result make it; see runs/view.ts). */
export const RUN_STATUSES = ['running', 'awaiting_approval', 'succeeded', 'failed'] as const
export type RunStatus = (typeof RUN_STATUSES)[number]

/** Which events a run POSTs to its `callback_url`: only the final result, or every event. */
export const CALLBACK_EVENTS = ['final', 'all'] as const
export type CallbackEvents = (typeof CALLBACK_EVENTS)[number]

/** Where a delivery (callback, Slack message, index write) stands. */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]
