/**
 * Slack interaction latency: the time from sending a signed `block_actions`
 * click to the Worker's answer, against a running `wrangler dev` on 127.0.0.1. Slack gives an
 * app 3 s to answer; this should stay far below.
 *
 * Each click names a well-formed but nonexistent run, so the full path runs (signature check,
 * payload parsing, the run's Durable Object lookup, the answer) and nothing executes. The Worker
 * then tells the clicker "run … no longer exists" with chat.postEphemeral: run wrangler dev with
 * SLACK_API_URL pointing at a local fake or with no SLACK_BOT_TOKEN, never at slack.com.
 *
 *   import { benchSlackLatency } from './bench/slack-latency.mjs'
 *   await benchSlackLatency('http://127.0.0.1:8787', { signingSecret: 'dev-secret', n: 200 })
 */
import { createHmac, randomBytes } from 'node:crypto'

const APPROVE_ACTION_ID = 'edgeloop_approve'

/** Sends `n` signed block_actions posts to `baseUrl`/slack/interactions; returns ms figures. */
export async function benchSlackLatency(baseUrl, { signingSecret, n = 200, warmup = 5 } = {}) {
  const url = new URL('/slack/interactions', baseUrl)
  if (url.hostname !== '127.0.0.1') {
    throw new Error(`benchSlackLatency only talks to 127.0.0.1 (wrangler dev); got ${url.host}`)
  }
  if (!signingSecret) {
    throw new Error('benchSlackLatency needs the signingSecret wrangler dev was started with')
  }
  if (!Number.isInteger(n) || n < 1) throw new Error(`n must be a positive integer; got ${n}`)

  // Warm-up clicks load the Worker and its Durable Object code; they are not measured.
  for (let i = 0; i < warmup; i++) await click(url, signingSecret, i)
  const times = []
  for (let i = 0; i < n; i++) times.push(await click(url, signingSecret, warmup + i))
  times.sort((a, b) => a - b)
  return { median_ms: round(quantile(times, 0.5)), p99_ms: round(quantile(times, 0.99)), n }
}

/** One signed click; resolves to the milliseconds until the full answer arrived. */
async function click(url, secret, i) {
  const body = new URLSearchParams({ payload: JSON.stringify(clickPayload(i)) }).toString()
  const timestamp = String(Math.floor(Date.now() / 1000))
  const signature =
    'v0=' + createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')
  const started = performance.now()
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': signature,
    },
    body,
  })
  await res.arrayBuffer()
  const ms = performance.now() - started
  if (res.status !== 200) {
    throw new Error(
      `click ${i} answered ${res.status}: is wrangler dev running with this SLACK_SIGNING_SECRET?`,
    )
  }
  return ms
}

/** A realistic block_actions payload: an approver clicking Approve on a run that is gone. */
function clickPayload(i) {
  const runId = `run_${randomBytes(16).toString('hex')}`
  const value = JSON.stringify({ r: runId, c: `call_${i}`, h: randomBytes(32).toString('hex') })
  const ts = `${Math.floor(Date.now() / 1000)}.${String(i).padStart(6, '0')}`
  return {
    type: 'block_actions',
    user: { id: 'UBENCH0001', username: 'bench', name: 'bench', team_id: 'T0001' },
    api_app_id: 'A123456',
    token: 'unused',
    container: { type: 'message', message_ts: ts, channel_id: 'C0BENCH01', is_ephemeral: false },
    trigger_id: `1.${i}.bench`,
    team: { id: 'T0001', domain: 'bench' },
    channel: { id: 'C0BENCH01', name: 'bench' },
    message: { type: 'message', ts, text: 'Approval needed: http_post', bot_id: 'B0001' },
    response_url: 'https://hooks.slack.test/actions/T0001/1/bench',
    actions: [
      {
        action_id: APPROVE_ACTION_ID,
        block_id: 'edgeloop_approval',
        text: { type: 'plain_text', text: 'Approve' },
        value,
        style: 'primary',
        type: 'button',
        action_ts: ts,
      },
    ],
  }
}

/** Nearest-rank quantile of sorted values. */
function quantile(sorted, q) {
  const rank = Math.ceil(q * sorted.length)
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]
}

function round(ms) {
  return Math.round(ms * 100) / 100
}
