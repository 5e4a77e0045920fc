// The eval runner's surface (docs/evals.md), used by scripts/eval-main.ts and the tests.
export { compareToBaseline, DEFAULT_THRESHOLD, type Regression } from './baseline'
export { EvalFileSchema, parseEvalFile, type EvalFile } from './case-schema'
export { parseEvalArgs, type EvalArgs } from './cli-args'
export { EvalFileError } from './eval-file-error'
export { fakePhases } from './fake-phases'
export { checkExpectations, partialMatch, type ExpectationFailure } from './expectations'
export { judge, VERDICT_SCHEMA, type Verdict } from './judge'
export { mean, passAtK, passHatK, percentile } from './pass-k'
export { caseFromRecording } from './recorded-case'
export { recordingFromExport, type Recording } from './recording'
export { replay, type Replayed, type ReplayOptions } from './replay'
export {
  agentSummaries,
  caseReport,
  combineReports,
  reportText,
  REPORT_FORMAT,
  type CaseReport,
  type EvalReport,
} from './report'
export { reportHtml } from './report-html'
export { runEval, type EvalOptions } from './run-eval'
export { diffReplay, diffText, lineDiff, type Difference } from './trace-diff'
export { runTrial, type TrialOutcome, type TrialStatus } from './trial'
export type { WorkerClient } from './worker-client'
