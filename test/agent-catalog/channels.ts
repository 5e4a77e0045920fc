/** The Slack channels the test agents (catalog.ts) answer in. */
export const INCIDENT_CHANNEL = 'C0INCIDENT1'
export const TICKETS_CHANNEL = 'G0TICKETS1'
/** Where the incident agent's runs not started from Slack post their pending items. */
export const INCIDENT_APPROVALS_CHANNEL = 'C0INCIDENTOPS'
