export { EdgeloopClient, type EdgeloopClientOptions, type EventsOptions } from './edgeloop-client'
export { EdgeloopError } from './edgeloop-error'
export type {
  ApprovalPageBody as ApprovalPage,
  CancellingBody as Cancelling,
  DecisionResultBody as DecisionResult,
  MeBody as Me,
  RunEventBody as RunEvent,
  RunPageBody as RunPage,
  RunResultBody as RunResult,
  RunViewBody as RunView,
} from '../routes/response-schemas'
export type { CreatedRunBody as CreatedRun, CreateRunInput } from '../routes/schemas'
