/** The Slack channels the test agents (catalog.ts) answer in. */
export const INCIDENT_CHANNEL = 'C0INCIDENT1'
export const TICKETS_CHANNEL = 'G0TICKETS1'
