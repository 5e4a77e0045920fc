#!/usr/bin/env node
// `npm run client:types`: writes src/client/api-types.ts from the OpenAPI document the service
// serves at /openapi.json (built here from the same code, no server needed).
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { importTs } from '../bench/import-ts.mjs'
import { openApiTypes } from './openapi-types.mjs'

const { openApiDocument } = await importTs('../src/routes/openapi/openapi.ts')
// Through JSON, exactly as the route sends it.
const doc = JSON.parse(JSON.stringify(openApiDocument('http://127.0.0.1:8787')))
const out = join(import.meta.dirname, '..', 'src', 'client', 'api-types.ts')
writeFileSync(out, openApiTypes(doc))
console.log(`client:types: wrote ${out}`)
