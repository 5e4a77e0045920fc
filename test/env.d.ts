// The Worker under test, as `cloudflare:workers` exposes it to the tests: worker-configuration.d.ts
// (`npm run cf-typegen`) declares its bindings and main module; the settings are added here.
type EdgeloopSettings = import('../src/env-vars').EnvVars

declare namespace Cloudflare {
  interface Env extends Omit<EdgeloopSettings, keyof WranglerEnv> {}
}
