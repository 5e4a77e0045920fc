#!/usr/bin/env node
// `npm run client:types`: writes src/client/api-types.ts from the OpenAPI document the service
// serves at /openapi.json (the app answers it here, no server needed).
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { importTs } from '../bench/import-ts.mjs'
import { openApiTypes } from './openapi-types.mjs'

const { app } = await importTs('../src/routes/app.ts')
// The document as the app answers GET /openapi.json (no settings needed: it is built from code).
const served = await app.request(`http://127.0.0.1:8787/openapi.json`, {}, {})
if (served.status !== 200) throw new Error(`/openapi.json answered ${served.status}`)
// Through JSON, exactly as the route sends it.
const doc = await served.json()
const out = join(import.meta.dirname, '..', 'src', 'client', 'api-types.ts')
writeFileSync(out, openApiTypes(doc))
console.log(`client:types: wrote ${out}`)
