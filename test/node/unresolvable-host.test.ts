/**
 * What workerd itself logs when a Worker's fetch names a host that does not resolve, with the
 * rejection handled: the smallest Worker that does it, under Miniflare as `wrangler dev` runs
 * workerd. This is the runtime's behaviour, not edgeloop's (a run meets it when OPENAI_BASE_URL
 * is wrong: test/model-unreachable/); docs/operations.md#an-unreachable-host tells an
 * operator what the lines mean, and this test fails when a workerd release changes them.
 */
import { convertV4MiniflareOptions, Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// `model.invalid`: RFC 2606 reserves `.invalid`, which never resolves.
const WORKER = `
export default {
  async fetch(request) {
    const unhandled = []
    const onUnhandled = (event) => {
      unhandled.push(String(event.reason))
    }
    addEventListener('unhandledrejection', onUnhandled)
    let caught = null
    if (new URL(request.url).pathname === '/unhandled') {
      // The control: a rejection nobody handles, which the listener must see.
      Promise.reject(new Error('left unhandled'))
    } else {
      try {
        await fetch('https://model.invalid/v1/chat/completions', { method: 'POST', body: '{}' })
      } catch (err) {
        caught = String(err)
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
    removeEventListener('unhandledrejection', onUnhandled)
    return Response.json({ caught, unhandled })
  },
}`

interface Logged {
  level: string
  message: string
}

/** A Miniflare running WORKER; `verbose` as the vitest pool runs workerd. */
function start(verbose: boolean) {
  const logs: Logged[] = []
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      script: WORKER,
      compatibilityDate: '2026-04-01',
      verbose,
      handleStructuredLogs: ({ level, message }) => void logs.push({ level, message }),
    }),
  )
  return { mf, logs }
}

async function call(
  rt: ReturnType<typeof start>,
  path: string,
): Promise<{ caught: string | null; unhandled: string[]; logs: Logged[] }> {
  rt.logs.length = 0
  const res = await rt.mf.dispatchFetch(`https://worker.test${path}`)
  const body = (await res.json()) as { caught: string | null; unhandled: string[] }
  return { ...body, logs: [...rt.logs] }
}

const REFERENCE = /^Error: internal error; reference = (\w+)$/

describe.each([
  ['as wrangler dev runs it', false],
  ['verbose, as the vitest pool runs it', true],
])('workerd %s', (_label, verbose) => {
  let rt: ReturnType<typeof start>
  beforeAll(async () => {
    rt = start(verbose)
    await rt.mf.ready
  })
  afterAll(() => rt?.mf.dispose())

  it('a handled fetch to a host that does not resolve: the lookup failure logged under the reference the Worker is given, nothing unhandled', async () => {
    const { caught, unhandled, logs } = await call(rt, '/')
    // The Worker sees only a reference, never the cause.
    const reference = REFERENCE.exec(caught ?? '')?.[1]
    expect(reference, String(caught)).toBeDefined()
    expect(unhandled).toEqual([])

    const [lookup, ...rest] = logs
    expect(lookup!.level).toBe('error')
    expect(lookup!.message).toMatch(/failed to lookup address information/)
    expect(lookup!.message).toContain(`wdErrId = ${reference}`)
    // Verbose, workerd also says the rejection was uncaught, although the Worker caught it.
    expect(rest.map((l) => `${l.level} ${l.message.split('\n')[0]}`)).toEqual(
      verbose
        ? [
            `info uncaught exception; source = Uncaught (in promise); stack = Error: internal error; reference = ${reference}`,
            `info uncaught exception; exception = workerd/jsg/value.h:1456: failed: jsg.Error: internal error; reference = ${reference}`,
          ]
        : [],
    )
  })

  it('the control: a rejection the Worker really leaves unhandled reaches its listener, and workerd logs nothing', async () => {
    const { unhandled, logs } = await call(rt, '/unhandled')
    expect(unhandled).toEqual(['Error: left unhandled'])
    expect(logs).toEqual([])
  })
})
