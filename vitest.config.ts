import { cloudflareTest } from '@cloudflare/vitest-plugin'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: './wrangler.toml' },
      miniflare: { bindings: { API_TOKEN: 'test-token' } },
    }),
  ],
  test: { include: ['test/**/*.test.ts'] },
})
