import { describe, expect, it } from 'vitest'
import { originAllowed } from '../../src/serve/mcp'

const serving = {
  publicOrigin: 'https://agents.example.com',
  allowedOrigins: ['https://app.example.com'],
}

describe('originAllowed (DNS rebinding)', () => {
  it.each([
    // No Origin: not a browser.
    [undefined, 'https://agents.example.com/mcp', true],
    ['https://agents.example.com', 'https://agents.example.com/mcp', true],
    ['HTTPS://AGENTS.EXAMPLE.COM', 'https://agents.example.com/mcp', true],
    ['https://app.example.com', 'https://agents.example.com/mcp', true],
    // A loopback page calling a Worker on loopback (wrangler dev).
    ['http://localhost:6274', 'http://localhost:8787/mcp', true],
    ['http://127.0.0.1:6274', 'http://[::1]:8787/mcp', true],
    // A page whose name resolves to the Worker still sends its own name.
    ['http://evil.example.com', 'http://evil.example.com/mcp', false],
    ['http://evil.example.com', 'http://localhost:8787/mcp', false],
    ['http://localhost:6274', 'https://agents.example.com/mcp', false],
    ['https://agents.example.com.evil.test', 'https://agents.example.com/mcp', false],
    ['null', 'http://localhost:8787/mcp', false],
    ['not a url', 'http://localhost:8787/mcp', false],
  ])('Origin %s to %s: %s', (origin, url, allowed) => {
    expect(originAllowed(origin, url, serving)).toBe(allowed)
  })

  it('without PUBLIC_URL or MCP_ALLOWED_ORIGINS, only loopback pages on loopback', () => {
    const none = { publicOrigin: undefined, allowedOrigins: [] }
    expect(
      originAllowed('https://agents.example.com', 'https://agents.example.com/mcp', none),
    ).toBe(false)
    expect(originAllowed('http://localhost:1', 'http://127.0.0.1:2/mcp', none)).toBe(true)
  })
})
