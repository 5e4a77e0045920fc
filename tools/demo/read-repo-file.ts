import * as z from 'zod/mini'
import { defineTool } from '../../src/kernel/tool'
import { REPO_FILES } from './fixtures'

/** DEMO: reads files of the fixture repository of the order incident (tools/demo/fixtures.ts). */
export const readRepoFile = defineTool({
  name: 'read_repo_file',
  description:
    'DEMO tool (fixture data). Read one file of the services repository, e.g. a config file or ' +
    `the changelog. path: relative to the repository root. Files: ${Object.keys(REPO_FILES).join(', ')}.`,
  params: z.object({
    path: z.string().check(z.describe('Path from the repository root, e.g. "CHANGELOG.md"')),
  }),
  returns: 'The path on the first line, a blank line, then the file content.',
  handler: ({ path }) => {
    const clean = path.trim().replace(/^(?:\.\/|\/)+/, '')
    const content = REPO_FILES[clean]
    if (content === undefined) {
      throw new Error(
        `no file "${path}" in the repository; available paths: ${Object.keys(REPO_FILES).join(', ')}`,
      )
    }
    return `${clean}\n\n${content}`
  },
})
