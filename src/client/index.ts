export {
  EdgeloopClient,
  type EdgeloopClientOptions,
  type EventsOptions,
  type LiveDelta,
  type RunListChange,
  type RunListOptions,
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
  RunListEvent,
  RunPage,
  RunResult,
  RunView,
  StoredObservation,
} from './api-types.js'
