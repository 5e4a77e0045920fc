import { defineConfig } from 'vitest/config'

// `npm run soak` (not part of `npm test`): random SIGKILLs of the real Worker under Miniflare.
export default defineConfig({
  test: {
    name: 'soak',
    environment: 'node',
    include: ['test/node/soak/**/*.soak.ts'],
    hookTimeout: 60_000,
  },
})
