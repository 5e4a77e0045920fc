export * from './call'
export * from './json-loose'
export * from './parse-output'
