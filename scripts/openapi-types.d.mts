/** Types of openapi-types.mjs (the client's generated types, test/client). */
export function openApiTypes(doc: unknown): string
