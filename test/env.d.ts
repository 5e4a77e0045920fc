// The Worker under test, as `cloudflare:workers` exposes it to the tests.
type EdgeloopEnv = import('../src/env').Env
type EdgeloopMain = typeof import('../src/index')

declare namespace Cloudflare {
  interface Env extends EdgeloopEnv {}
  interface GlobalProps {
    mainModule: EdgeloopMain
  }
}
