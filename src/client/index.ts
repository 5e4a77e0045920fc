export {
  EdgeloopClient,
  type EdgeloopClientOptions,
  type EventsOptions,
  type LiveDelta,
} from './edgeloop-client.js'
export { EdgeloopError } from './edgeloop-error.js'
export type {
  Agent,
  AgentList,
  ApprovalPage,
  Cancel as CancelInput,
  Cancelling,
  CreatedRun,
  CreateRun as CreateRunInput,
  DecisionResult,
  Deleted,
  Me,
  RunEvent,
  RunApprovals,
  RunExport,
  RunPage,
  RunResult,
  RunView,
  StoredObservation,
} from './api-types.js'
