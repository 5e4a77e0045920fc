// `cloudflare:workers` for scripts that load the app under plain Node (the OpenAPI lint, the
// client's types, benchmarks): Node has no such module. What the app reaches of it at import is
// @cloudflare/workers-oauth-provider's `WorkerEntrypoint`, which the library only uses to tell an
// entrypoint class from a handler object (`prototype instanceof`); these scripts run no Worker.
export class WorkerEntrypoint {}
export class DurableObject {}
