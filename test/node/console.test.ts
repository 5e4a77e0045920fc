/**
 * The web console in a real headless Chromium, against `wrangler dev` running the
 * offline demo: open it, give the token, watch the demo run reach its approval, approve it from
 * the page and watch the run finish; read-only and write-only tokens; the layout at phone
 * (390 px) and desktop (1280 px) widths; the chart, folded observations, the start form; the
 * list following runs from their events while the index is held still; Delete; agents where the
 * service has them; and, against a second `wrangler dev` whose model is an OpenAI-compatible
 * fake on 127.0.0.1 that streams, the answer shown as it is written; a run started by a plain
 * API call listed from the run-list stream at both widths, and the poll when the stream is
 * refused. Against the bundle in workerd under Miniflare (console-worker.ts): the inbox's Connect
 * through the OAuth authorization server fake at both widths, the run going on to its answer;
 * the live text of a model call lost to a SIGKILL dropped for the call made again; no error shown
 * for a restart the page reconnects through, a click's failure shown at once and an outage past
 * 20 s shown once; the agent picker with a 40-character name. Screenshots go to test/output/ (console-timeline,
 * -read-only, -phone-list, -phone-run, -phone-run-full, -phone-live-list, -desktop,
 * -desktop-live-list, -delete-confirm, -deleted, -agents, -streaming, -{phone,desktop}-inbox-connect,
 * -{phone,desktop}-connected, -desktop-retried-stream, -desktop-agent-picker; .png).
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startWranglerDev } from '../../bench/wrangler-dev.mjs'
import { wranglerConfigWithoutDevVars } from '../../scripts/test-wrangler-config.mjs'
import { FAKE_OPENAI_KEY, FakeOpenAI, reply } from '../fakes/fake-openai'
import { startConsoleWorker, type ConsoleWorker } from './console-worker'
import { serveFake, type FakeHttpServer } from './fake-http-server'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..')
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
// A named token (API_TOKENS): the console's decisions are recorded under its name.
const TOKEN = 'console-test-token'
const TOKEN_NAME = 'oncall'
// A read-only token: the console shows it everything and offers it nothing that changes a run.
const READER_TOKEN = 'console-reader-token'
const LAUNCHER_TOKEN = 'console-launcher-token'
// May read and delete runs: the console offers it Delete.
const JANITOR_TOKEN = 'console-janitor-token'
// A second person with every scope: their own connection to a per-person MCP server.
const STANDBY_TOKEN = 'console-standby-token'
const sha256 = (token: string) => createHash('sha256').update(token).digest('hex')
const API_TOKENS = JSON.stringify([
  {
    name: TOKEN_NAME,
    sha256: sha256(TOKEN),
    scopes: ['runs:read', 'runs:write', 'approvals:write'],
  },
  { name: 'viewer', sha256: sha256(READER_TOKEN), scopes: ['runs:read'] },
  // Starts runs, reads none: the console says so instead of failing on every list.
  { name: 'launcher', sha256: sha256(LAUNCHER_TOKEN), scopes: ['runs:write'] },
  { name: 'janitor', sha256: sha256(JANITOR_TOKEN), scopes: ['runs:read', 'runs:delete'] },
  {
    name: 'standby',
    sha256: sha256(STANDBY_TOKEN),
    scopes: ['runs:read', 'runs:write', 'approvals:write'],
  },
])
const TASK = 'The order service 5xx rate jumped from 0.1% to 12%. Find the root cause and fix it.'
const OUTPUT = join(ROOT, 'test/output')
// .ci/run installs Chromium and sets REQUIRE_CHROMIUM, so CI can never skip this.
const available = existsSync(CHROMIUM) || process.env.REQUIRE_CHROMIUM === '1'
const title = available
  ? 'the console in Chromium'
  : `the console in Chromium (SKIPPED: no ${CHROMIUM}; apt-get install chromium, or set CHROMIUM_PATH)`

// One line where Chromium is missing (and not required), so a skip is never silent.
if (!available) console.warn(`test/node/console.test.ts: ${title.replace(/^.*\((.*)\)$/, '$1')}`)

describe.skipIf(!available)(title, () => {
  let dev: Awaited<ReturnType<typeof startWranglerDev>>
  let context: BrowserContext
  let profile: string

  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), 'edgeloop-chromium-'))
    // Chromium starts while wrangler dev does: neither needs the other before the first test.
    // Each is kept as it comes, so afterAll stops whichever started when the other failed.
    const started = await Promise.allSettled([
      // The offline demo as `npm start` runs it, from a copy of wrangler.toml that no local
      // .dev.vars sits beside (a developer's settings must not change what this test sees).
      startWranglerDev(
        ROOT,
        {
          API_TOKENS,
          API_TOKEN: '',
          MODEL: 'demo',
          OPENAI_API_KEY: '',
          ENABLED_TOOLS: '',
          // Prices, so the timeline shows each step's cost and the run's.
          PRICE_PROMPT_PER_1K_USD: '0.15',
          PRICE_COMPLETION_PER_1K_USD: '0.6',
        },
        { config: wranglerConfigWithoutDevVars() },
      ).then((started) => (dev = started)),
      chromium
        .launchPersistentContext(profile, {
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
        .then((launched) => (context = launched)),
    ])
    for (const result of started) if (result.status === 'rejected') throw result.reason
  }, 120_000)

  afterAll(async () => {
    await context?.close()
    dev?.stop()
    if (profile) rmSync(profile, { recursive: true, force: true })
  })

  // Each test closes the tabs it opened: their event streams would hold connections the next
  // test's tabs need (a browser opens at most six to one HTTP/1.1 origin).
  const opened: Page[] = []
  const newPage = async (viewport?: { width: number; height: number }) => {
    const page = await context.newPage()
    opened.push(page)
    if (viewport) await page.setViewportSize(viewport)
    return page
  }
  afterEach(async () => {
    for (const page of opened.splice(0)) await page.close()
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
    // A small observation budget, so the log search comes back truncated (the "read more").
    const { id } = await api('/v1/runs', {
      method: 'POST',
      body: JSON.stringify({ task: TASK, budget: { maxObservationTokens: 200 } }),
    })
    const page = await newPage()
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
    // Asked once: a reload in the same tab opens the console without asking again.
    await page.reload()
    await page.locator('#app').waitFor()
    expect(await page.locator('#login').isHidden()).toBe(true)

    // The status filters: the run is listed under "awaiting approval" once the index has it
    // there, and not under "succeeded".
    await page.click('#filters button[data-status=awaiting_approval]')
    await page.locator(`#runs li[data-run="${id}"]`).waitFor({ timeout: 60_000 })
    const succeededPage = page.waitForResponse((r) => r.url().includes('status=succeeded'))
    await page.click('#filters button[data-status=succeeded]')
    expect((await (await succeededPage).json()).items).toEqual([])
    await page.locator('#filters button.active[data-status=succeeded]').waitFor()
    await page.locator(`#runs li[data-run="${id}"]`).waitFor({ state: 'detached' })
    await page.click('#filters button[data-status=""]')

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
    // Tokens, ms and cost per step, and the run's cost.
    expect(await page.locator('.step .meta').first().textContent()).toMatch(
      /\d+ \+ \d+ tokens · \d+ ms \(model \d+ ms\) · \$\d/,
    )
    expect(await page.locator('[data-testid=run-usage]').textContent()).toMatch(/\$\d/)
    // The approval also waits in the inbox.
    await page.locator('#inbox li', { hasText: 'rollback_deploy' }).waitFor()

    // "read more" on the truncated log search loads its whole output through the API.
    const truncated = view.result.steps
      .flatMap((s: any) => s.calls)
      .find((c: any) => c.truncated && c.handle)
    expect(truncated?.name).toBe('search_logs')
    const call = page.locator(`.call[data-call="${truncated.id}"]`)
    expect(await call.locator('.observation').textContent()).toBe(truncated.observation)
    // Its answer is held until the run has moved on (approved, finished) and the timeline was
    // redrawn: the whole text must still land in the timeline as it is shown then.
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let asked!: () => void
    const askedFor = new Promise<void>((resolve) => (asked = resolve))
    await page.route('**/observations/**', async (route) => {
      asked()
      await released
      await route.continue()
    })
    await call.locator('button.read-more').click()
    await askedFor
    await approval.locator('button.approve').click()
    const answer = page.locator('[data-testid=answer]')
    await answer.waitFor({ timeout: 60_000 })
    expect(await call.locator('button.read-more').count()).toBe(1)
    release()
    await call.locator('button.read-more').waitFor({ state: 'detached' })
    const whole = await api(`/v1/runs/${id}/observations/${truncated.handle}`)
    expect(whole.text.length).toBeGreaterThan(truncated.observation.length)
    expect(await call.locator('.observation').textContent()).toBe(whole.text)

    expect(await answer.textContent()).toContain('max_connections from 50 to 10')
    expect(await page.locator('[data-testid=run-status]').textContent()).toBe('succeeded')
    // The page read the run's end from its event stream (live frames are coalesced, so the
    // stream's last event may come a moment after a re-read of the run showed it finished).
    await page
      .locator('body[data-last-event="run_finished"]')
      .waitFor({ state: 'attached', timeout: 10_000 })
    // The list and the inbox follow: the run succeeded, nothing waits any more.
    await page.locator(`#runs li[data-run="${id}"] .status.succeeded`).waitFor()
    await page.locator('#inbox li', { hasText: 'rollback_deploy' }).waitFor({ state: 'detached' })
    const trace = await api(`/v1/runs/${id}/trace`)
    expect(trace.steps[3].calls[0].approval).toMatchObject({
      decision: 'approved',
      decidedBy: TOKEN_NAME,
    })
    expect(await page.locator('.step').count()).toBe(trace.steps.length)

    mkdirSync(OUTPUT, { recursive: true })
    await page.screenshot({ path: join(OUTPUT, 'console-timeline.png'), fullPage: true })
    expect(errors).toEqual([])
  }, 180_000)

  it('follows a run live: a cancel sent elsewhere shows up without touching the page', async () => {
    const { id } = await api('/v1/runs', {
      method: 'POST',
      body: JSON.stringify({ task: TASK, budget: { maxObservationTokens: 200 } }),
    })
    const page = await newPage()
    const errors: string[] = []
    page.on('pageerror', (err) => errors.push(err.message))
    // Same browser profile, new tab: sessionStorage is per tab, so the token is asked again.
    await page.goto(`${dev.baseUrl}/console#run=${id}`)
    await page.fill('#token', TOKEN)
    await page.click('#login button[type=submit]')
    await page.locator('[data-testid=approval]').waitFor({ timeout: 60_000 })
    // A log search read whole before the run changes.
    const call = page.locator('.call', { has: page.locator('button.read-more') }).first()
    const callId = await call.getAttribute('data-call')
    await call.locator('button.read-more').click()
    const redrawn = page.locator(`.call[data-call="${callId}"]`)
    await redrawn.locator('button.read-more').waitFor({ state: 'detached' })
    const whole = await redrawn.locator('.observation').textContent()

    // Only the event stream reloads an open run's timeline; the page does nothing here.
    await api(`/v1/runs/${id}/cancel`, { method: 'POST', body: JSON.stringify({}) })
    const failure = page.locator('[data-testid=failure]')
    await failure.waitFor({ timeout: 30_000 })
    // The redrawn timeline keeps the whole log search open.
    expect(await redrawn.locator('button.read-more').count()).toBe(0)
    expect(await redrawn.locator('.observation').textContent()).toBe(whole)
    expect(await failure.textContent()).toContain('cancelled')
    expect(await page.locator('[data-testid=run-status]').textContent()).toBe('failed')
    expect(await page.locator('[data-testid=approval]').count()).toBe(0)
    expect(errors).toEqual([])
  }, 120_000)

  it('offers a runs:read token no Approve, Deny or Cancel, saying which scope each needs', async () => {
    const { id } = await api('/v1/runs', { method: 'POST', body: JSON.stringify({ task: TASK }) })
    const errors: string[] = []
    const open = async (token: string) => {
      const page = await newPage()
      page.on('pageerror', (err) => errors.push(err.message))
      await page.goto(`${dev.baseUrl}/console#run=${id}`)
      await page.fill('#token', token)
      await page.click('#login button[type=submit]')
      return page
    }
    const reader = await open(READER_TOKEN)
    // The header names the token and its scopes, as GET /v1/me answers them.
    await reader.locator('#who[data-token=viewer]').waitFor()
    expect(await reader.locator('#who').textContent()).toBe('viewer · runs:read')
    const approval = reader.locator('[data-testid=approval]')
    await approval.waitFor({ timeout: 60_000 })
    expect(await approval.textContent()).toContain('rollback_deploy')
    expect(await approval.locator('button').count()).toBe(0)
    expect(await approval.locator('[data-testid=needs-scope]').textContent()).toBe(
      'Approve / Deny needs approvals:write (token "viewer" has runs:read)',
    )
    expect(await reader.locator('[data-testid=cancel]').count()).toBe(0)
    expect(await reader.locator('#run-panel [data-scope="runs:write"]').textContent()).toBe(
      'Cancel needs runs:write (token "viewer" has runs:read)',
    )
    // Nothing it asked for was refused (a 403 would show in the error box).
    expect(await reader.locator('#error').isHidden()).toBe(true)
    mkdirSync(OUTPUT, { recursive: true })
    await reader.screenshot({ path: join(OUTPUT, 'console-read-only.png'), fullPage: true })

    // The full token's tab offers all three; its Cancel stops the run, and the reader's tab,
    // which only reads, follows the run to its end.
    const full = await open(TOKEN)
    await full.locator(`#who[data-token=${TOKEN_NAME}]`).waitFor()
    expect(await full.locator('#who').textContent()).toBe(
      `${TOKEN_NAME} · runs:write, runs:read, approvals:write`,
    )
    await full.locator('[data-testid=approval] button.approve').waitFor({ timeout: 60_000 })
    expect(await full.locator('[data-testid=approval] button.deny').count()).toBe(1)
    expect(await full.locator('[data-testid=needs-scope]').count()).toBe(0)
    await full.click('[data-testid=cancel]')
    await full.locator('[data-testid=failure]').waitFor({ timeout: 30_000 })
    await reader.locator('[data-testid=failure]').waitFor({ timeout: 30_000 })
    expect(await reader.locator('[data-testid=failure]').textContent()).toContain('cancelled')
    expect(await full.locator('[data-testid=cancel]').count()).toBe(0)
    expect((await api(`/v1/runs/${id}/trace`)).stopReason).toBe('cancelled')
    expect(errors).toEqual([])
  }, 120_000)

  it('tells a token without runs:read that it cannot read runs, and asks for nothing else', async () => {
    const page = await newPage()
    const errors: string[] = []
    page.on('pageerror', (err) => errors.push(err.message))
    const asked: string[] = []
    page.on('request', (r) => asked.push(new URL(r.url()).pathname))
    await page.goto(`${dev.baseUrl}/console`)
    await page.fill('#token', LAUNCHER_TOKEN)
    await page.click('#login button[type=submit]')
    await page.locator('#who[data-token=launcher]').waitFor()
    expect(await page.locator('#run-panel [data-scope="runs:read"]').textContent()).toBe(
      'Reading runs needs runs:read (token "launcher" has runs:write)',
    )
    expect(asked.filter((path) => path.startsWith('/v1/'))).toEqual(['/v1/me'])
    expect(await page.locator('#error').isHidden()).toBe(true)
    expect(errors).toEqual([])
  }, 60_000)

  // A tab at the given size with the token given.
  const openConsole = async (
    viewport: { width: number; height: number },
    hash = '',
    {
      token = TOKEN,
      baseUrl = dev.baseUrl,
      prepare,
    }: { token?: string; baseUrl?: string; prepare?: (page: Page) => Promise<unknown> } = {},
  ) => {
    const page = await newPage(viewport)
    const errors: string[] = []
    page.on('pageerror', (err) => errors.push(err.message))
    await prepare?.(page)
    await page.goto(`${baseUrl}/console${hash}`)
    await page.fill('#token', token)
    await page.click('#login button[type=submit]')
    await page.locator('#who[data-token]').waitFor()
    return { page, errors }
  }

  // The layout facts: no element reaches past either edge of the screen, and the page does not
  // scroll sideways.
  const expectFits = async (page: Page) => {
    const facts = await page.evaluate(() => {
      const doc = globalThis as unknown as {
        innerWidth: number
        document: {
          documentElement: { scrollWidth: number }
          querySelectorAll(s: string): ArrayLike<{
            tagName: string
            id: string
            className: unknown
            getBoundingClientRect(): { left: number; right: number; width: number }
          }>
        }
      }
      const width = doc.innerWidth
      const wider = Array.from(doc.document.querySelectorAll('body *'))
        .map((node) => ({ node, box: node.getBoundingClientRect() }))
        .filter(({ box }) => box.width > 0 && (box.right > width + 0.5 || box.left < -0.5))
        .map(
          ({ node, box }) =>
            `${node.tagName}#${node.id}.${String(node.className)} ${box.left}..${box.right}`,
        )
      return { width, scrollWidth: doc.document.documentElement.scrollWidth, wider }
    })
    expect(facts.wider).toEqual([])
    expect(facts.scrollWidth).toBeLessThanOrEqual(facts.width)
  }

  // What fills its box without scrolling inside it (wrapped, not cut or scrolled sideways).
  const wraps = (page: Page, selector: string) =>
    page.$$eval(selector, (nodes) =>
      nodes.every(
        (n) =>
          (n as unknown as { scrollWidth: number; clientWidth: number }).scrollWidth <=
          (n as unknown as { clientWidth: number }).clientWidth,
      ),
    )

  it('on a phone (390 px): one column, nothing wider than the screen, the approval first', async () => {
    const { id } = await api('/v1/runs', { method: 'POST', body: JSON.stringify({ task: TASK }) })
    const { page, errors } = await openConsole({ width: 390, height: 844 })
    // The inbox comes first and shows what is to be approved, arguments and all.
    const waiting = page.locator(`#inbox li[data-run="${id}"]`)
    await waiting.waitFor({ timeout: 60_000 })
    expect(await waiting.locator('pre.args').textContent()).toContain('"to_version": "v2.13.2"')
    expect(await waiting.textContent()).toContain('rollback_deploy')
    expect(await wraps(page, '#inbox pre.args')).toBe(true)
    await expectFits(page)
    // The token's name and scopes take one line, cut with an ellipsis, the whole in its title.
    const who = page.locator('#who[data-token]')
    await who.waitFor()
    const line = await who.evaluate((el) =>
      parseFloat(el.ownerDocument.defaultView!.getComputedStyle(el).lineHeight),
    )
    expect((await who.boundingBox())!.height).toBeLessThanOrEqual(line * 1.2)
    expect(await who.getAttribute('title')).toBe(await who.textContent())
    mkdirSync(OUTPUT, { recursive: true })
    await page.screenshot({ path: join(OUTPUT, 'console-phone-list.png') })

    await waiting.click()
    const approval = page.locator('[data-testid=approval]')
    await approval.waitFor({ timeout: 30_000 })
    // The open run comes first, at its top: its approval is on the first screen.
    expect(await page.evaluate(() => (globalThis as unknown as { scrollY: number }).scrollY)).toBe(
      0,
    )
    const approve = (await approval.locator('button.approve').boundingBox())!
    expect(approve.y).toBeGreaterThan(0)
    expect(approve.y + approve.height).toBeLessThanOrEqual(844)
    const panel = (await page.locator('#run-panel').boundingBox())!
    expect(panel.width).toBeGreaterThanOrEqual(0.9 * 390)
    const list = (await page.locator('#runs-panel').boundingBox())!
    expect(list.y).toBeGreaterThanOrEqual(panel.y + panel.height)
    await expectFits(page)
    // The arguments, the hash and every observation wrap inside their boxes.
    expect(await wraps(page, '#run-panel pre')).toBe(true)
    expect(await wraps(page, '[data-testid=args-hash]')).toBe(true)

    // The per-step chart: one column per step with its time and tokens, the side effect marked.
    const view = await api(`/v1/runs/${id}`)
    const columns = page.locator('[data-testid=step-chart] .column')
    expect(await columns.count()).toBe(view.stepCount)
    for (const step of view.result.steps) {
      const column = columns.nth(step.i)
      expect(await column.getAttribute('data-ms')).toBe(String(step.ms))
      expect(await column.getAttribute('data-tokens')).toBe(
        String(step.promptTokens + step.completionTokens),
      )
    }
    expect(
      await page
        .locator('[data-testid=step-chart] .column[data-side-effect]')
        .evaluateAll((cs) =>
          cs.map((c) => [c.getAttribute('data-step'), c.getAttribute('data-side-effect')]),
        ),
    ).toEqual([['3', 'rollback_deploy']])
    expect(
      await page.locator('[data-testid=step-chart] .column[data-step="3"] .effect').count(),
    ).toBe(1)
    await page.screenshot({ path: join(OUTPUT, 'console-phone-run.png') })

    // A long observation shows its first lines; "show all" unfolds it, "show less" folds it.
    const foldedCall = await page
      .locator('#run-panel .call', { has: page.locator('pre.folded') })
      .first()
      .getAttribute('data-call')
    const output = page.locator(`#run-panel .call[data-call="${foldedCall}"] .output`)
    const pre = output.locator('pre.observation')
    const heights = () =>
      pre.evaluate((n) => {
        const box = n as unknown as { clientHeight: number; scrollHeight: number }
        return { shown: box.clientHeight, whole: box.scrollHeight }
      })
    const folded = await heights()
    expect(folded.shown).toBeLessThan(folded.whole / 2)
    const text = await pre.textContent()
    await output.locator('button.show-all').click()
    expect(await pre.getAttribute('class')).not.toContain('folded')
    const unfolded = await heights()
    expect(unfolded.shown).toBeGreaterThanOrEqual(unfolded.whole - 1)
    expect(await pre.textContent()).toBe(text)
    expect(await output.locator('button.show-all').textContent()).toBe('show less')
    await expectFits(page)
    await page.screenshot({ path: join(OUTPUT, 'console-phone-run-full.png'), fullPage: true })

    // "All runs" goes back to the list, first on the screen again.
    await page.click('#run-panel button.back')
    await page.locator('#run-panel .hint').waitFor()
    expect((await page.locator('#runs-panel').boundingBox())!.y).toBeLessThan(
      (await page.locator('#run-panel').boundingBox())!.y,
    )
    await api(`/v1/runs/${id}/cancel`, { method: 'POST', body: JSON.stringify({}) })
    expect(errors).toEqual([])
  }, 120_000)

  it('draws the run tree on a phone: the oncall run, its log_analyst child opened in place', async () => {
    const { id } = await api('/v1/runs', {
      method: 'POST',
      body: JSON.stringify({ task: TASK, agent: 'oncall' }),
    })
    const { page, errors } = await openConsole({ width: 390, height: 844 }, `#run=${id}`)
    await page.locator('[data-testid=approval]').waitFor({ timeout: 60_000 })
    const tree = page.locator('[data-testid=children]')
    await tree.waitFor()
    expect(await tree.locator('h3').textContent()).toBe('1 child run')
    const item = tree.locator('li').first()
    expect(await item.locator('.status').textContent()).toBe('succeeded')
    const child = (await item.getAttribute('data-run'))!
    // Opened in place: the child's own steps, its search of the logs and its answer.
    await item.locator('[data-testid=child-toggle]').click()
    const panel = page.locator(`[data-testid=child-panel][data-run="${child}"]`)
    await panel.waitFor()
    expect(await panel.locator('.call strong').allTextContents()).toEqual(['search_logs'])
    expect(await panel.locator('.answer').textContent()).toContain('in use 10/10, max 10')
    expect(await item.locator('[data-testid=child-toggle]').getAttribute('aria-expanded')).toBe(
      'true',
    )
    await expectFits(page)
    expect(await wraps(page, '#run-panel code')).toBe(true)
    mkdirSync(OUTPUT, { recursive: true })
    await page.screenshot({ path: join(OUTPUT, 'console-phone-tree.png'), fullPage: true })
    // The child names its parent, which opens it again.
    await panel.locator('button.link').click()
    await page.locator('[data-testid=parent-run] button').waitFor()
    await page.locator('[data-testid=parent-run] button').click()
    await page.locator('[data-testid=children]').waitFor()
    await api(`/v1/runs/${id}/cancel`, { method: 'POST', body: JSON.stringify({}) })
    expect(errors).toEqual([])
  }, 120_000)

  /**
   * Answers GET /v1/runs and /v1/approvals from the index as it answered last once `freeze()`
   * is called: whatever the list shows next cannot come from a poll of the index.
   */
  const freezeIndex = (page: Page) => {
    const last = new Map<string, string>()
    let frozen = false
    const installed = page.route(
      (url) => url.pathname === '/v1/runs' || url.pathname === '/v1/approvals',
      async (route) => {
        const request = route.request()
        const key = new URL(request.url()).pathname
        if (request.method() !== 'GET') return route.continue()
        if (frozen && last.has(key))
          return route.fulfill({
            status: 200,
            contentType: 'application/json',
            body: last.get(key)!,
          })
        const answer = await route.fetch()
        const body = await answer.text()
        last.set(key, body)
        return route.fulfill({ response: answer, body })
      },
    )
    return {
      installed,
      answered: () => last.has('/v1/runs') && last.has('/v1/approvals'),
      freeze: () => {
        frozen = true
      },
    }
  }

  for (const viewport of [
    { name: 'phone', width: 390, height: 844 },
    { name: 'desktop', width: 1280, height: 800 },
  ]) {
    it(`lists a run started by a plain API call without a reload, from the run-list stream (${viewport.name}, ${viewport.width} px)`, async () => {
      let index!: ReturnType<typeof freezeIndex>
      const { page, errors } = await openConsole(viewport, '', {
        prepare: async (p) => {
          index = freezeIndex(p)
          await index.installed
        },
      })
      await page.locator('body[data-list-stream=live]').waitFor({ timeout: 30_000 })
      await expect.poll(() => index.answered(), { timeout: 10_000 }).toBe(true)
      index.freeze()

      // Started as the README's curl starts it: the console has no part in it.
      const startedAt = Date.now()
      const { id } = await api('/v1/runs', { method: 'POST', body: JSON.stringify({ task: TASK }) })
      const row = page.locator(`#runs li[data-run="${id}"]`)
      await row.waitFor({ timeout: 10_000 })
      console.info(
        `console list (${viewport.width} px): a run started by curl was listed after ${Date.now() - startedAt} ms`,
      )
      // Its approval reaches the row and the inbox the same way.
      await row.locator('.status.awaiting_approval').waitFor({ timeout: 30_000 })
      await page.locator(`#inbox li[data-run="${id}"]`).waitFor({ timeout: 10_000 })
      expect(await page.locator('body').getAttribute('data-list-stream')).toBe('live')
      await expectFits(page)
      mkdirSync(OUTPUT, { recursive: true })
      await page.screenshot({ path: join(OUTPUT, `console-${viewport.name}-live-list.png`) })

      await api(`/v1/runs/${id}/cancel`, { method: 'POST', body: JSON.stringify({}) })
      await row.locator('.status.failed').waitFor({ timeout: 10_000 })
      await page
        .locator(`#inbox li[data-run="${id}"]`)
        .waitFor({ state: 'detached', timeout: 10_000 })
      expect(errors).toEqual([])
    }, 120_000)
  }

  it('on a desktop: two columns; the list follows runs from their events, not from the index', async () => {
    let index!: ReturnType<typeof freezeIndex>
    const { page, errors } = await openConsole({ width: 1280, height: 800 }, '', {
      // No run-list stream: the console falls back to polling the index.
      prepare: async (p) => {
        await p.route(
          (url) => url.pathname === '/v1/runs/stream',
          (route) => route.abort(),
        )
        index = freezeIndex(p)
        await index.installed
      },
    })
    // The favicon is served and drawn.
    expect(await page.locator('link[rel=icon]').getAttribute('href')).toBe('/console/favicon.svg')
    const icon = await fetch(`${dev.baseUrl}/console/favicon.svg`)
    expect(icon.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8')
    expect(
      await page
        .locator('header h1 img')
        .evaluate((n) => (n as unknown as { naturalWidth: number }).naturalWidth),
    ).toBeGreaterThan(0)

    // A run started elsewhere, found through the poll of the index (the stream is refused).
    const other = await api('/v1/runs', { method: 'POST', body: JSON.stringify({ task: TASK }) })
    const otherRow = page.locator(`#runs li[data-run="${other.id}"]`)
    await otherRow.waitFor({ timeout: 60_000 })
    expect(await page.locator('body').getAttribute('data-list-stream')).toBe('polling')
    // From here on the index answers what it answered last: whatever the list shows next can
    // only come from the runs' own events and views.
    await page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/approvals', {
      timeout: 10_000,
    })
    await page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/runs', { timeout: 10_000 })
    index.freeze()

    // Started from the form: listed at once, opened, followed to its approval.
    await page.click('#start-box summary')
    await page.fill('#start-task', TASK)
    const started = page.waitForResponse(
      (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/v1/runs',
    )
    await page.click('#start button[type=submit]')
    const { id } = await (await started).json()
    const approval = page.locator('[data-testid=approval]')
    await approval.waitFor({ timeout: 30_000 })
    expect(await page.locator('#runs li').first().getAttribute('data-run')).toBe(id)
    await page
      .locator(`#runs li[data-run="${id}"] .status.awaiting_approval`)
      .waitFor({ timeout: 10_000 })
    await page.locator(`#inbox li[data-run="${id}"]`).waitFor({ timeout: 10_000 })
    expect(page.url()).toContain(`#run=${id}`)
    // This token may not delete runs: no Delete is offered.
    expect(await page.locator('[data-testid=delete]').count()).toBe(0)

    // Two columns; the approval on the first screen; nothing wider than the window.
    const listBox = (await page.locator('#runs-panel').boundingBox())!
    const panel = (await page.locator('#run-panel').boundingBox())!
    expect(listBox.x + listBox.width).toBeLessThanOrEqual(panel.x)
    expect(panel.width).toBeGreaterThan(0.6 * 1280)
    const approve = (await approval.locator('button.approve').boundingBox())!
    expect(approve.y + approve.height).toBeLessThanOrEqual(800)
    await expectFits(page)
    mkdirSync(OUTPUT, { recursive: true })
    await page.screenshot({ path: join(OUTPUT, 'console-desktop.png') })

    // The run started elsewhere is not open: its row and its approval follow its events.
    await page
      .locator(`#runs li[data-run="${other.id}"] .status.awaiting_approval`)
      .waitFor({ timeout: 30_000 })
    await page.locator(`#inbox li[data-run="${other.id}"]`).waitFor({ timeout: 10_000 })
    const cancelledAt = Date.now()
    await api(`/v1/runs/${other.id}/cancel`, { method: 'POST', body: JSON.stringify({}) })
    await page
      .locator(`#runs li[data-run="${other.id}"] .status.failed`)
      .waitFor({ timeout: 10_000 })
    await page
      .locator(`#inbox li[data-run="${other.id}"]`)
      .waitFor({ state: 'detached', timeout: 10_000 })
    console.info(
      `console list: a cancel elsewhere showed in the list after ${Date.now() - cancelledAt} ms`,
    )

    // Approved here: the open run and its row finish.
    await approval.locator('button.approve').click()
    await page.locator('[data-testid=answer]').waitFor({ timeout: 30_000 })
    await page.locator(`#runs li[data-run="${id}"] .status.succeeded`).waitFor({ timeout: 10_000 })
    await page
      .locator(`#inbox li[data-run="${id}"]`)
      .waitFor({ state: 'detached', timeout: 10_000 })
    expect(errors).toEqual([])
  }, 120_000)

  it('offers Delete to a runs:delete token only, asks once more, and the run is gone', async () => {
    const { id } = await api('/v1/runs', { method: 'POST', body: JSON.stringify({ task: TASK }) })
    const { page, errors } = await openConsole({ width: 390, height: 844 }, `#run=${id}`, {
      token: JANITOR_TOKEN,
    })
    expect(await page.locator('#who').textContent()).toBe('janitor · runs:read, runs:delete')
    await page.locator('[data-testid=approval]').waitFor({ timeout: 60_000 })
    await page.locator(`#runs li[data-run="${id}"]`).waitFor({ timeout: 30_000 })
    // "Keep" takes the question back; nothing was sent.
    const deletes: string[] = []
    page.on('request', (r) => r.method() === 'DELETE' && deletes.push(new URL(r.url()).pathname))
    await page.click('[data-testid=delete]')
    expect(await page.locator('.delete-control .confirm').textContent()).toContain('for good')
    await page.click('[data-testid=delete-keep]')
    await page.locator('[data-testid=delete]').waitFor()
    expect(deletes).toEqual([])
    await page.click('[data-testid=delete]')
    mkdirSync(OUTPUT, { recursive: true })
    await page.screenshot({ path: join(OUTPUT, 'console-delete-confirm.png') })
    await page.click('[data-testid=delete-confirm]')
    await page.locator('[data-testid=deleted]').waitFor({ timeout: 30_000 })
    expect(deletes).toEqual([`/v1/runs/${id}`])
    // Out of the list and the inbox, and asked again it is gone.
    await page.locator(`#runs li[data-run="${id}"]`).waitFor({ state: 'detached' })
    expect(await page.locator(`#inbox li[data-run="${id}"]`).count()).toBe(0)
    const gone = await fetch(`${dev.baseUrl}/v1/runs/${id}`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    })
    expect(gone.status).toBe(404)
    expect(((await gone.json()) as { error: { code: string } }).error.code).toBe('run_deleted')
    // Listing the index again (as the page does when it comes back into view) does not bring it
    // back.
    const listed = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/runs', {
      timeout: 10_000,
    })
    await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { dispatchEvent(e: unknown): void } })
        .document
      doc.dispatchEvent(new Event('visibilitychange'))
    })
    await listed
    expect(await page.locator(`#runs li[data-run="${id}"]`).count()).toBe(0)
    mkdirSync(OUTPUT, { recursive: true })
    await page.screenshot({ path: join(OUTPUT, 'console-deleted.png') })
    expect(await page.locator('#error').isHidden()).toBe(true)
    expect(errors).toEqual([])
  }, 120_000)

  it("offers the service's agents to start a run and to filter the list, and shows each run's agent", async () => {
    const asked = await fetch(`${dev.baseUrl}/v1/agents`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    })
    const { page, errors } = await openConsole({ width: 1280, height: 800 })
    await page.locator('#start-box').waitFor()
    await page.locator('body[data-agents]').waitFor({ state: 'attached' })
    await page.click('#start-box summary')
    await page.locator('#start-task').waitFor()
    if (asked.status === 404) {
      // A service without agents: no picker, no filter, no error.
      expect(await page.locator('#start-agent-field').isHidden()).toBe(true)
      expect(await page.locator('#agent-filter').isHidden()).toBe(true)
      expect(await page.locator('#error').isHidden()).toBe(true)
      expect(errors).toEqual([])
      return
    }
    expect(asked.status).toBe(200)
    const { agents } = (await asked.json()) as { agents: { name: string }[] }
    const names = agents.map((a) => a.name)
    const chosen = names.includes('oncall') ? 'oncall' : names[0]!
    await page.locator('#start-agent-field').waitFor()
    expect(
      await page
        .locator('#start-agent option')
        .evaluateAll((os) => os.map((o) => o.getAttribute('value'))),
    ).toEqual(['', ...names])
    expect(
      await page
        .locator('#agent-filter option')
        .evaluateAll((os) => os.map((o) => o.getAttribute('value'))),
    ).toEqual(['', ...names])

    // Started with the chosen agent: the run, its row and its panel name it.
    await page.fill('#start-task', TASK)
    await page.selectOption('#start-agent', chosen)
    const started = page.waitForResponse(
      (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/v1/runs',
    )
    await page.click('#start button[type=submit]')
    const startedRequest = (await started).request()
    expect(JSON.parse(startedRequest.postData()!)).toEqual({ task: TASK, agent: chosen })
    const { id } = await (await started).json()
    const view = await api(`/v1/runs/${id}`)
    expect(view.agent.name).toBe(chosen)
    await page
      .locator('#run-panel [data-testid=run-agent]', { hasText: chosen })
      .waitFor({ timeout: 30_000 })
    await page
      .locator(`#runs li[data-run="${id}"] [data-testid=run-agent]`, { hasText: chosen })
      .waitFor()

    // The filter asks the API for that agent's runs and lists exactly those.
    const filtered = page.waitForResponse(
      (r) => new URL(r.url()).searchParams.get('agent') === chosen,
    )
    await page.selectOption('#agent-filter', chosen)
    const answer = (await (await filtered).json()) as { items: { id: string }[] }
    expect(answer.items.map((r) => r.id)).toContain(id)
    await page.waitForFunction(
      (ids) => {
        const rows = (globalThis as any).document.querySelectorAll('#runs li[data-run]')
        return rows.length === ids.length
      },
      answer.items.map((r) => r.id),
    )
    const rows = await page
      .locator('#runs li[data-run]')
      .evaluateAll((lis) =>
        lis.map((li) => [
          li.getAttribute('data-run'),
          li.querySelector('[data-testid=run-agent]')?.textContent,
        ]),
      )
    expect(rows.map(([run]) => run).sort()).toEqual(answer.items.map((r) => r.id).sort())
    for (const [, agent] of rows) expect(agent).toContain(chosen)
    mkdirSync(OUTPUT, { recursive: true })
    await page.screenshot({ path: join(OUTPUT, 'console-agents.png') })
    await api(`/v1/runs/${id}/cancel`, { method: 'POST', body: JSON.stringify({}) })
    expect(errors).toEqual([])
  }, 120_000)

  describe('with a model that streams (an OpenAI-compatible fake on 127.0.0.1)', () => {
    let streaming: Awaited<ReturnType<typeof startWranglerDev>>
    let server: FakeHttpServer
    const fake = new FakeOpenAI()

    beforeAll(async () => {
      server = await serveFake(fake.handler)
      streaming = await startWranglerDev(
        ROOT,
        {
          API_TOKENS,
          API_TOKEN: '',
          MODEL: 'gpt-fake',
          OPENAI_API_KEY: FAKE_OPENAI_KEY,
          OPENAI_BASE_URL: `${server.origin}/v1`,
          MODEL_PROTOCOL: 'native',
          MODEL_STREAM: 'on',
          ENABLED_TOOLS: 'rollback_deploy,ask_person',
        },
        { config: wranglerConfigWithoutDevVars() },
      )
    }, 120_000)

    afterAll(async () => {
      streaming?.stop()
      await server?.close()
    })

    const call = async (path: string, body: unknown) => {
      const res = await fetch(`${streaming.baseUrl}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      })
      expect(res.ok, `${path}: ${res.status}`).toBe(true)
      return res.json() as Promise<any>
    }

    it('shows the answer as the model writes it, until the step is recorded', async () => {
      const answer =
        'Rolled back to v2.13.2: the pool holds 50 connections again and the 5xx rate falls.'
      fake.enqueue(
        reply.toolCalls(
          [
            {
              name: 'rollback_deploy',
              arguments: { service: 'order', to_version: 'v2.13.2', reason: 'pool exhausted' },
            },
          ],
          { content: 'The pool is exhausted since v2.14.0; rolling back.' },
        ),
        // The answer's first pieces, then nothing until the request is given up.
        reply.text(answer, { stallAfterChunks: 8 }),
      )
      const { id } = await call('/v1/runs', { task: TASK })
      const { page, errors } = await openConsole({ width: 390, height: 844 }, `#run=${id}`, {
        baseUrl: streaming.baseUrl,
      })
      const approval = page.locator('[data-testid=approval]')
      await approval.waitFor({ timeout: 60_000 })
      // Approved here, so this page is listening when the next step's reply streams.
      await approval.locator('button.approve').click()
      const live = page.locator('[data-testid=live-answer]')
      await live.waitFor({ timeout: 30_000 })
      await expect
        .poll(async () => (await live.textContent())!.length, { timeout: 10_000 })
        .toBeGreaterThanOrEqual(12)
      const written = (await live.textContent())!
      expect(answer.startsWith(written)).toBe(true)
      expect(written.length).toBeLessThan(answer.length)
      expect(await page.locator('[data-testid=live]').getAttribute('data-step')).toBe('1')
      expect(await page.locator('[data-testid=run-status]').textContent()).toBe('running')
      await expectFits(page)
      mkdirSync(OUTPUT, { recursive: true })
      await page.screenshot({ path: join(OUTPUT, 'console-streaming.png') })

      // Cancelled mid-reply: the run ends, and what was being written goes with the step.
      await call(`/v1/runs/${id}/cancel`, {})
      await page.locator('[data-testid=failure]').waitFor({ timeout: 30_000 })
      expect(await page.locator('[data-testid=live]').count()).toBe(0)
      expect(fake.violations).toEqual([])
      expect(errors).toEqual([])
    }, 120_000)

    const get = async (path: string) => {
      const res = await fetch(`${streaming.baseUrl}${path}`, {
        headers: { Authorization: `Bearer ${TOKEN}` },
      })
      return res.json() as Promise<any>
    }

    for (const viewport of [
      { name: 'phone', width: 390, height: 844 },
      { name: 'desktop', width: 1280, height: 800 },
    ]) {
      it(`the inbox answers a question and approves edited arguments inline (${viewport.name}, ${viewport.width} px)`, async () => {
        fake.enqueue(
          reply.toolCalls(
            [
              {
                name: 'ask_person',
                arguments: { question: 'Which region?', choices: ['eu-west', 'us-east'] },
              },
            ],
            { content: 'I must not guess.' },
          ),
          reply.toolCalls(
            [
              {
                name: 'rollback_deploy',
                arguments: { service: 'order', to_version: 'v2.13.2', reason: 'pool exhausted' },
              },
            ],
            { content: 'Rolling back in eu-west.' },
          ),
          reply.text('Done.'),
        )
        const { id } = await call('/v1/runs', { task: TASK })
        const { page, errors } = await openConsole(viewport, '', { baseUrl: streaming.baseUrl })
        const question = page.locator(`#inbox li[data-run="${id}"][data-kind=question]`)
        await question.waitFor({ timeout: 60_000 })
        expect(await question.textContent()).toContain('Which region?')
        await expectFits(page)
        await question.locator('[data-testid=inbox-choice]', { hasText: 'eu-west' }).click()

        const approval = page.locator(`#inbox li[data-run="${id}"][data-kind=approval]`)
        await approval.waitFor({ timeout: 60_000 })
        await approval.locator('[data-testid=inbox-edit]').click()
        const form = approval.locator('[data-testid=edit-form]')
        await form.waitFor()
        expect(await form.locator('[data-testid=edit-to_version]').inputValue()).toBe('v2.13.2')
        await form.locator('[data-testid=edit-to_version]').fill('v2.13.1')
        await expectFits(page)
        mkdirSync(OUTPUT, { recursive: true })
        await page.screenshot({ path: join(OUTPUT, `console-${viewport.name}-inbox-edit.png`) })
        await form.locator('[data-testid=edit-approve]').click()
        await approval.waitFor({ state: 'detached', timeout: 30_000 })

        await expect
          .poll(async () => (await get(`/v1/runs/${id}`)).status, { timeout: 30_000 })
          .toBe('succeeded')
        const trace = await get(`/v1/runs/${id}/trace`)
        expect(trace.steps[0].calls[0]).toMatchObject({
          observation: `${TOKEN_NAME} answered: eu-west`,
          approval: { kind: 'question', answer: 'eu-west', decidedBy: TOKEN_NAME },
        })
        expect(trace.steps[1].calls[0]).toMatchObject({
          args: { service: 'order', to_version: 'v2.13.1', reason: 'pool exhausted' },
          approval: { decision: 'approved', decidedBy: TOKEN_NAME, edit: { by: TOKEN_NAME } },
        })
        expect(trace.steps[1].calls[0].observation).toContain(
          '[Edited] oncall changed the arguments',
        )
        expect(fake.violations).toEqual([])
        expect(errors).toEqual([])
      }, 120_000)
    }
  })
  describe('in workerd under Miniflare: an MCP server behind OAuth, a model that streams, a crash', () => {
    let world: ConsoleWorker
    let unroute: (() => Promise<void>) | undefined

    beforeAll(async () => {
      world = await startConsoleWorker({ API_TOKENS, API_TOKEN: '' })
      unroute = await world.routeAuthServer(context)
    }, 120_000)

    afterAll(async () => {
      await unroute?.()
      await world?.stop()
    })

    const as =
      (token: string) =>
      async (path: string, init: RequestInit = {}) => {
        const res = await fetch(`${world.baseUrl}${path}`, {
          ...init,
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        })
        expect(res.ok, `${path}: ${res.status}`).toBe(true)
        return res.json() as Promise<any>
      }

    it('lays the agent picker out whole at 1280 px: several agents, one with a 40-character name', async () => {
      const { agents } = (await as(TOKEN)('/v1/agents')) as {
        agents: { name: string; description: string }[]
      }
      const names = agents.map((a) => a.name)
      // console-agents.ts's agent with a name as long as may be, beside the shipped ones.
      const long = agents.find((a) => a.name.length === 40)!
      expect(long.name).toBe('payments_reconciliation_incident_analyst')
      expect(names.length).toBeGreaterThanOrEqual(4)
      const { page, errors } = await openConsole({ width: 1280, height: 800 }, '', {
        baseUrl: world.baseUrl,
      })
      await page.locator('body[data-agents]').waitFor({ state: 'attached' })
      await page.click('#start-box summary')
      const picker = page.locator('#start-agent')
      await picker.waitFor()
      expect(
        await picker.locator('option').evaluateAll((os) => os.map((o) => o.getAttribute('value'))),
      ).toEqual(['', ...names])
      await expectFits(page)
      // The picker, and the list's agent filter, lie inside the screen and their panel, and
      // show every option whole: each is no narrower than it would be sized to its widest option.
      for (const selector of ['#start-agent', '#agent-filter']) {
        const fit = await page.locator(selector).evaluate((select) => {
          const box = select.getBoundingClientRect()
          const panel = select.closest('section')!.getBoundingClientRect()
          const probe = select.cloneNode(true) as typeof select
          // Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
          Object.assign(probe.style, { position: 'absolute', width: 'auto', maxWidth: 'none' })
          select.parentElement!.append(probe)
          const needs = probe.getBoundingClientRect().width
          probe.remove()
          const view = select.ownerDocument.defaultView!
          return {
            left: box.left,
            right: box.right,
            panel: [panel.left, panel.right],
            width: box.width,
            needs,
            viewport: view.innerWidth,
            scroll: [select.scrollWidth, select.clientWidth],
          }
        })
        expect(fit.left, selector).toBeGreaterThanOrEqual(fit.panel[0]!)
        expect(fit.right, selector).toBeLessThanOrEqual(fit.panel[1]!)
        expect(fit.right, selector).toBeLessThanOrEqual(fit.viewport)
        expect(fit.scroll[0], selector).toBeLessThanOrEqual(fit.scroll[1]!)
        expect(fit.needs, `${selector}: ${JSON.stringify(fit)}`).toBeLessThanOrEqual(fit.width)
      }
      // Chosen, the long-named agent's description is shown beside the picker, wrapped in its
      // panel.
      await picker.selectOption(long.name)
      const about = page.locator('#start-agent-about')
      expect(await about.textContent()).toContain(long.description)
      const aboutBox = (await about.boundingBox())!
      const panelBox = (await page.locator('#runs-panel').boundingBox())!
      expect(aboutBox.x + aboutBox.width).toBeLessThanOrEqual(panelBox.x + panelBox.width)
      await expectFits(page)
      mkdirSync(OUTPUT, { recursive: true })
      await page.screenshot({ path: join(OUTPUT, 'console-desktop-agent-picker.png') })
      expect(errors).toEqual([])
    }, 120_000)

    // Each width has its own person: a per-person server is connected once per person.
    for (const { viewport, token, name } of [
      { viewport: { name: 'phone', width: 390, height: 844 }, token: TOKEN, name: TOKEN_NAME },
      {
        viewport: { name: 'desktop', width: 1280, height: 800 },
        token: STANDBY_TOKEN,
        name: 'standby',
      },
    ]) {
      it(`the inbox connects the MCP server a run waits on, through the OAuth consent, and the run finishes (${viewport.name}, ${viewport.width} px)`, async () => {
        const api = as(token)
        world.model.enqueue(
          reply.toolCalls([{ name: 'tracker__search', arguments: { query: 'bugs' } }]),
          reply.text('Three pages mention bugs.'),
        )
        const { id } = await api('/v1/runs', {
          method: 'POST',
          body: JSON.stringify({ task: 'Find the pages about bugs', tools: ['tracker__search'] }),
        })
        // Not connected, the server's tool is a stand-in whose policy was never listed: a side
        // effect, approved first (docs/mcp.md#oauth); the call then waits on the connection.
        let view: any
        await expect
          .poll(async () => (view = await api(`/v1/runs/${id}`)).pendingApprovals.length, {
            timeout: 60_000,
          })
          .toBe(1)
        const approval = view.pendingApprovals[0]
        expect(approval.kind).toBe('approval')
        await api(`/v1/runs/${id}/approvals/${approval.callId}`, {
          method: 'POST',
          body: JSON.stringify({ decision: 'approve', args_hash: approval.argsHash }),
        })
        const calls = world.tracker.calls.length

        const { page, errors } = await openConsole(viewport, '', { token, baseUrl: world.baseUrl })
        const item = page.locator(`#inbox li[data-run="${id}"][data-kind=connect]`)
        await item.waitFor({ timeout: 60_000 })
        expect(await item.textContent()).toContain('tracker')
        const connect = item.locator('button[data-testid=inbox-connect]')
        await connect.waitFor()
        // Usable at this width: nothing reaches past the screen, the action lies inside it.
        await expectFits(page)
        const button = (await connect.boundingBox())!
        expect(button.x).toBeGreaterThanOrEqual(0)
        expect(button.x + button.width).toBeLessThanOrEqual(viewport.width)
        expect(button.y + button.height).toBeLessThanOrEqual(viewport.height)
        mkdirSync(OUTPUT, { recursive: true })
        await page.screenshot({ path: join(OUTPUT, `console-${viewport.name}-inbox-connect.png`) })

        // A single-use link for this person and this item, followed in a new tab: the
        // authorization server's consent, then back to this Worker's callback.
        const linked = page.waitForResponse(
          (r) => new URL(r.url()).pathname === '/v1/connections/tracker/link',
        )
        await connect.click()
        const asked = await linked
        expect(asked.status()).toBe(201)
        expect(JSON.parse(asked.request().postData()!)).toEqual({
          runId: id,
          itemId: approval.callId,
        })
        const link = item.locator('a[data-testid=inbox-connect]')
        await link.waitFor()
        expect(await link.getAttribute('href')).toMatch(
          new RegExp(`^${world.baseUrl}/oauth/connect/[0-9a-f]{64}$`),
        )
        await expectFits(page)
        const [tab] = await Promise.all([context.waitForEvent('page'), link.click()])
        opened.push(tab)
        await tab.waitForURL((url) => url.pathname === '/oauth/callback', { timeout: 30_000 })
        await tab.locator('text=tracker is connected').waitFor({ timeout: 30_000 })

        // The grant resolved the item: it leaves the inbox, the call goes once, the run ends.
        await item.waitFor({ state: 'detached', timeout: 30_000 })
        await page.locator(`#runs li[data-run="${id}"]`).click()
        const answer = page.locator('[data-testid=answer]')
        await answer.waitFor({ timeout: 30_000 })
        expect(await answer.textContent()).toBe('Three pages mention bugs.')
        expect(await page.locator('[data-testid=run-status]').textContent()).toBe('succeeded')
        await expectFits(page)
        await page.screenshot({ path: join(OUTPUT, `console-${viewport.name}-connected.png`) })
        const trace = await api(`/v1/runs/${id}/trace`)
        expect(trace.steps[0].calls[0].observation).toBe('3 pages mention "bugs"')
        expect(world.tracker.calls.slice(calls).map((c) => [c.tool, c.args])).toEqual([
          ['search', { query: 'bugs' }],
        ])
        const { connections } = await api('/v1/connections')
        expect(connections).toContainEqual(
          expect.objectContaining({ server: 'tracker', owner: `token:${name}` }),
        )
        expect(world.model.violations).toEqual([])
        expect(world.network.unexpected).toEqual([])
        expect(errors).toEqual([])
      }, 120_000)
    }

    /** Records every message the page's error box shows, as it shows it. */
    const recordShownErrors = (page: Page) =>
      page.evaluate(() => {
        const w = globalThis as any
        const box = w.document.getElementById('error')
        w.shownErrors = []
        new w.MutationObserver(() => {
          if (!box.hidden) w.shownErrors.push(box.textContent)
        }).observe(box, { attributes: true, childList: true, characterData: true, subtree: true })
      })
    const shownErrors = (page: Page) =>
      page.evaluate(() => (globalThis as any).shownErrors as string[])

    /** A run whose first model call is held (it stays running), open in a page recording errors. */
    const runningRunOpen = async (answer: string) => {
      const held = world.holdNextAnswer()
      world.model.enqueue(reply.text('Never sent: this call is lost.'), reply.text(answer))
      const { id } = await as(TOKEN)('/v1/runs', {
        method: 'POST',
        body: JSON.stringify({ task: 'Say it' }),
      })
      const opened = await openConsole({ width: 1280, height: 800 }, `#run=${id}`, {
        baseUrl: world.baseUrl,
      })
      await opened.page.locator('[data-testid=cancel]').waitFor({ timeout: 30_000 })
      await opened.page.locator('body[data-list-stream=live]').waitFor({ timeout: 30_000 })
      await recordShownErrors(opened.page)
      await held.arrived
      return { id, ...opened }
    }

    it('shows no error for a restart it reconnects through: the run goes on on the page', async () => {
      const { id, page, errors } = await runningRunOpen('Back after the restart.')
      const reconnected = page.waitForResponse(
        (r) => new URL(r.url()).pathname === `/v1/runs/${id}/events`,
        { timeout: 60_000 },
      )
      await world.crash()
      await reconnected
      // The call made again answers; the page shows it from the reconnected stream.
      const answer = page.locator('[data-testid=answer]')
      await answer.waitFor({ timeout: 60_000 })
      expect(await answer.textContent()).toBe('Back after the restart.')
      await page.locator('body[data-list-stream=live]').waitFor({ timeout: 30_000 })
      expect(await shownErrors(page)).toEqual([])
      expect(errors).toEqual([])
    }, 180_000)

    it('shows a failed click at once, and an outage once it outlasts the retries (20 s)', async () => {
      const { id, page, errors } = await runningRunOpen('Back after the outage.')
      const start = await world.kill()
      try {
        const down = Date.now()
        // A person's action fails at once, and says so.
        await page.locator('[data-testid=cancel]').click()
        await expect.poll(() => shownErrors(page), { timeout: 10_000 }).toHaveLength(1)
        expect((await shownErrors(page))[0]).not.toMatch(/out of reach/)
        // The page's own reads keep failing quietly until the outage is 20 s old.
        await expect
          .poll(() => shownErrors(page), { timeout: 60_000, interval: 500 })
          .toEqual([
            expect.any(String),
            expect.stringMatching(/^the service has been out of reach for \d+ s/),
          ])
        expect(Date.now() - down).toBeGreaterThanOrEqual(20_000)
      } finally {
        await start()
      }
      // Back: the first answer ends the outage (its message goes), and the run goes on.
      await expect.poll(() => page.locator('#error').isHidden(), { timeout: 60_000 }).toBe(true)
      const answer = page.locator('[data-testid=answer]')
      await answer.waitFor({ timeout: 60_000 })
      expect(await answer.textContent()).toBe('Back after the outage.')
      expect((await as(TOKEN)(`/v1/runs/${id}`)).status).toBe('succeeded')
      expect(errors).toEqual([])
    }, 180_000)

    it('shows a failed first read of the token once; the retries that follow are quiet', async () => {
      let refused = 0
      const { page, errors } = await openConsole({ width: 1280, height: 800 }, '', {
        baseUrl: world.baseUrl,
        prepare: async (page) => {
          // GET /v1/me fails three times (the connection refused), then gets through.
          await page.route('**/v1/me', (route) =>
            refused++ < 3 ? route.abort('connectionrefused') : route.continue(),
          )
          await page.addInitScript(() => {
            const w = globalThis as any
            w.shownErrors = []
            w.document.addEventListener('DOMContentLoaded', () => {
              const box = w.document.getElementById('error')
              new w.MutationObserver(() => {
                if (!box.hidden) w.shownErrors.push(box.textContent)
              }).observe(box, { attributes: true, childList: true, characterData: true })
            })
          })
        },
      })
      expect(refused).toBe(4)
      expect(await page.locator('#who').getAttribute('data-token')).toBe(TOKEN_NAME)
      expect(await shownErrors(page)).toHaveLength(1)
      expect(errors).toEqual([])
    }, 120_000)

    it('drops the text of a model call a crash lost: only the call made again is shown, then its step', async () => {
      const LOST = 'Lost words: the process died while this was written, and nobody stores it.'
      const KEPT = 'Kept words: the call made again after the restart wrote this, and it is stored.'
      // Both answers are held until this page listens; the first stops after a few pieces.
      const first = world.holdNextAnswer()
      const again = world.holdNextAnswer()
      world.model.enqueue(reply.text(LOST, { stallAfterChunks: 12 }), reply.text(KEPT))
      const api = as(TOKEN)
      const { id } = await api('/v1/runs', {
        method: 'POST',
        body: JSON.stringify({ task: 'Say it' }),
      })
      const { page, errors } = await openConsole({ width: 1280, height: 800 }, `#run=${id}`, {
        baseUrl: world.baseUrl,
      })
      await page.locator('body[data-last-event]').waitFor({ state: 'attached', timeout: 30_000 })
      // Every text the live answer shows, in order, from here on.
      await page.evaluate(() => {
        const w = globalThis as any
        w.liveTexts = []
        new w.MutationObserver(() => {
          const live = w.document.querySelector('[data-testid=live-answer]')
          const text = live ? live.textContent : null
          if (text && w.liveTexts[w.liveTexts.length - 1] !== text) w.liveTexts.push(text)
        }).observe(w.document.getElementById('run-panel'), {
          subtree: true,
          childList: true,
          characterData: true,
        })
      })
      const liveTexts = () => page.evaluate(() => (globalThis as any).liveTexts as string[])
      await first.arrived
      first.pass()
      const live = page.locator('[data-testid=live-answer]')
      await expect
        .poll(async () => (await live.textContent()) ?? '', { timeout: 30_000 })
        .toMatch(/^Lost words/)
      expect(LOST.startsWith((await live.textContent())!)).toBe(true)

      // workerd dies while the model writes; a new one on the same storage makes the call again.
      const reconnected = page.waitForResponse(
        (r) => new URL(r.url()).pathname === `/v1/runs/${id}/events`,
        { timeout: 60_000 },
      )
      await world.crash()
      await reconnected
      await again.arrived
      // The call made again writes a few pieces, and stops there for now.
      again.pass(8)
      await expect
        .poll(async () => (await live.textContent()) ?? '', { timeout: 30_000 })
        .toMatch(/^Kept words/)
      const written = (await live.textContent())!
      expect(KEPT.startsWith(written)).toBe(true)
      expect(written.length).toBeLessThan(KEPT.length)
      expect(await page.locator('#run-panel').textContent()).not.toContain('Lost words')
      await page.screenshot({ path: join(OUTPUT, 'console-desktop-retried-stream.png') })

      // The rest: the step is stored with the kept call's text alone.
      again.pass()
      const answer = page.locator('[data-testid=answer]')
      await answer.waitFor({ timeout: 30_000 })
      expect(await answer.textContent()).toBe(KEPT)
      expect(await page.locator('[data-testid=live]').count()).toBe(0)
      expect(await page.locator('#run-panel').textContent()).not.toContain('Lost words')
      // From the first piece of the kept call on, no text of the lost one was shown.
      const seen = await liveTexts()
      const from = seen.findIndex((t) => t.startsWith('Kept words'))
      expect(from).toBeGreaterThan(0)
      expect(seen.slice(0, from).every((t) => LOST.startsWith(t))).toBe(true)
      expect(seen.slice(from).filter((t) => !KEPT.startsWith(t))).toEqual([])
      const trace = await api(`/v1/runs/${id}/trace`)
      expect(trace.usage.lostModelCalls).toBe(1)
      expect(JSON.stringify(trace)).not.toContain('Lost words')
      expect(world.model.violations).toEqual([])
      expect(errors).toEqual([])
    }, 180_000)
  })
})
