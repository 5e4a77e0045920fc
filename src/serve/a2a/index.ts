export { A2A_PATH, AGENT_CARD_PATH, agentCard } from './agent-card'
export type { A2aCaller } from './a2a-caller'
export { answerJsonRpc, rpcRefusal, RPC_CODES, type RpcRefusal } from './json-rpc'
