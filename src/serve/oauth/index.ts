export { authorize, oauthOff } from './authorize'
export { servedCaller, scopeRefusal, type ServedAuth } from './served-caller'
export type { ServedCaller } from './served-caller-type'
export { refusalResponse, type ServedRefusal } from './served-refusal'
export {
  OAUTH_ENDPOINTS,
  REQUIRED_SCOPES,
  SERVED_PATHS,
  servedOAuth,
  type ServedOAuth,
  type ServedPath,
} from './served-resources'
