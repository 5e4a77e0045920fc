import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config'
import full from './vitest.config'

/**
 * `npm run test:quick`: the kernel and the HTTP API through the Worker's fetch, in a couple of
 * minutes on a busy laptop, for the edit-test loop. The kernel runs in plain Node (it is Web-API
 * TypeScript and runs the same there; the full suite runs it in workerd too); the API tests run
 * in workerd with the settings of the full suite's main project. `npm test` stays the whole
 * suite (CI runs it).
 */
const projects = (full.test?.projects ?? []) as TestProjectInlineConfiguration[]
const service = projects.find((p) => p.test?.name === 'edgeloop')
if (!service) throw new Error('vitest.config.ts has no project named edgeloop')

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        test: {
          name: 'kernel',
          environment: 'node',
          include: ['test/kernel/**/*.test.ts'],
          // One module registry for all kernel files: the kernel is imported once, not once per
          // file (about 40 s of imports became 10 s on the shared 2-core machine). The kernel
          // is pure and its tests keep no state between files; the full suite runs them in
          // workerd, where files share a workerd the same way (workerProject in vitest.config.ts).
          isolate: false,
        },
      },
      {
        ...service,
        test: {
          ...service.test,
          name: 'api',
          include: [
            'test/api/**/*.test.ts',
            'test/service/lifecycle.test.ts',
            'test/service/bad-requests.test.ts',
            'test/events/stream.test.ts',
            'test/events/run-list-stream.test.ts',
          ],
          exclude: [],
        },
      },
    ],
  },
})
