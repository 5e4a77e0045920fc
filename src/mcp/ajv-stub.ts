/**
 * Stands in for `ajv` and `ajv-formats` in the Worker bundle (wrangler.toml `[alias]`). The MCP
 * SDK imports them for its default validator, which compiles schemas with `new Function` and so
 * cannot run on Workers (EvalError); edgeloop always passes the SDK's cfworker validator instead,
 * and a use of ajv fails here with an error that names that fix (docs/decisions.md#ajv).
 */
export default function ajvUnavailable(): never {
  throw new Error(
    'ajv is not bundled: Workers forbid its code generation; pass CfWorkerJsonSchemaValidator',
  )
}
