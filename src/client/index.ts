export { EdgeloopClient, type EdgeloopClientOptions, type EventsOptions } from './edgeloop-client'
export { EdgeloopError } from './edgeloop-error'
export type {
  ApprovalPageBody as ApprovalPage,
  CancellingBody as Cancelling,
  DecisionResultBody as DecisionResult,
  DeletedBody as Deleted,
  MeBody as Me,
  RunEventBody as RunEvent,
  RunExportBody as RunExport,
  RunPageBody as RunPage,
  RunResultBody as RunResult,
  RunViewBody as RunView,
} from '../routes/response-schemas'
export type { CreatedRunBody as CreatedRun, CreateRunInput } from '../routes/schemas'
