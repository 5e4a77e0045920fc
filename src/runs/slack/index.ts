// What the RunStore uses of a run's Slack deliveries; the files here import each other directly.
export { SlackPumps } from './slack-pumps'
export { queueStreamText, STREAM_ID } from './slack-stream'
