export {
  startRun,
  type Delegation,
  type Requester,
  type RunChoices,
  type StartEnv,
  type StartedRun,
  type StartRequest,
} from './start-run'
export { StartError, type StartRefusal } from './start-error'
export { findAgent } from './run-agent'
export { idFromKey } from './run-id'
export { slackAgent } from './slack-agent'
export { answerSlackAsk, type SlackAsk, type SlackAskOutcome } from './slack-ask'
