/**
 * The web console in a real headless Chromium (issue 15 §3), against `wrangler dev` running the
 * offline demo: open it, give the token, watch the demo run reach its approval, approve it from
 * the page and watch the run finish. The timeline is saved as test/output/console-timeline.png.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type BrowserContext } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWranglerDev } from '../../bench/wrangler-dev.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..')
const CHROMIUM = '/usr/bin/chromium'
const TOKEN = 'console-test-token'
const TASK = 'The order service 5xx rate jumped from 0.1% to 12%. Find the root cause and fix it.'
const OUTPUT = join(ROOT, 'test/output')
// .ci/run installs Chromium and sets REQUIRE_CHROMIUM, so CI can never skip this.
const available = existsSync(CHROMIUM) || process.env.REQUIRE_CHROMIUM === '1'

describe.skipIf(!available)('the console in Chromium', () => {
  let dev: Awaited<ReturnType<typeof startWranglerDev>>
  let context: BrowserContext
  let profile: string

  beforeAll(async () => {
    dev = await startWranglerDev(ROOT, { API_TOKEN: TOKEN, MODEL: 'demo', OPENAI_API_KEY: '' })
    profile = mkdtempSync(join(tmpdir(), 'edgeloop-chromium-'))
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    })
  }, 120_000)

  afterAll(async () => {
    await context?.close()
    dev?.stop()
    if (profile) rmSync(profile, { recursive: true, force: true })
  })

  const api = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${dev.baseUrl}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    })
    expect(res.ok, `${path}: ${res.status}`).toBe(true)
    return res.json() as Promise<any>
  }

  it('shows the demo run reach its approval, approves it, and shows it finish', async () => {
    const { id } = await api('/v1/runs', { method: 'POST', body: JSON.stringify({ task: TASK }) })
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (err) => errors.push(err.message))

    const html = await (await fetch(`${dev.baseUrl}/console`)).text()
    expect(html).not.toContain(TOKEN)
    await page.goto(`${dev.baseUrl}/console`)
    await page.fill('#token', TOKEN)
    await page.click('#login button[type=submit]')
    expect(
      await page.evaluate(() =>
        (
          globalThis as unknown as { sessionStorage: { getItem(k: string): string | null } }
        ).sessionStorage.getItem('edgeloop.token'),
      ),
    ).toBe(TOKEN)

    await page.click(`#runs li[data-run="${id}"]`, { timeout: 30_000 })
    const approval = page.locator('[data-testid=approval]')
    await approval.waitFor({ timeout: 60_000 })
    const view = await api(`/v1/runs/${id}`)
    expect(view.status).toBe('awaiting_approval')
    const pending = view.pendingApprovals[0]
    expect(await approval.locator('[data-testid=args-hash]').textContent()).toBe(pending.argsHash)
    expect(await approval.textContent()).toContain('rollback_deploy')
    // The timeline so far: the investigation's steps with their calls and observations.
    expect(await page.locator('.step').count()).toBe(view.stepCount)
    expect(await page.locator('.call .observation').first().textContent()).not.toBe('')
    // The approval also waits in the inbox.
    await page.locator('#inbox li', { hasText: 'rollback_deploy' }).waitFor()

    await approval.locator('button.approve').click()
    const answer = page.locator('[data-testid=answer]')
    await answer.waitFor({ timeout: 60_000 })
    expect(await answer.textContent()).toContain('max_connections from 50 to 10')
    expect(await page.locator('[data-testid=run-status]').textContent()).toBe('succeeded')
    const trace = await api(`/v1/runs/${id}/trace`)
    expect(trace.steps[3].calls[0].approval).toMatchObject({
      decision: 'approved',
      decidedBy: 'api:console',
    })
    expect(await page.locator('.step').count()).toBe(trace.steps.length)

    mkdirSync(OUTPUT, { recursive: true })
    await page.screenshot({ path: join(OUTPUT, 'console-timeline.png'), fullPage: true })
    expect(errors).toEqual([])
  }, 180_000)
})
