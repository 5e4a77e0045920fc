/**
 * Stands in for `ajv` and `ajv-formats` in the Worker bundle (wrangler.toml `[alias]`). The MCP
 * SDK imports them for its default validator, which compiles schemas with `new Function` and so
 * cannot run on Workers; edgeloop always passes the SDK's cfworker validator instead. Leaving
 * them out saves 132 KiB of minified code (npm run bench -- bundle).
 */
export default function ajvUnavailable(): never {
  throw new Error(
    'ajv is not bundled: Workers forbid its code generation; pass CfWorkerJsonSchemaValidator',
  )
}
