/** Text helpers for Slack `mrkdwn`: escaping, truncation, dates and mentions. */

/** Slack's limit for the text of one section or context text object. */
export const SLACK_TEXT_LIMIT = 3000

/**
 * Escape the three characters Slack treats as control sequences, so model output or tool
 * arguments can never become a `<!channel>` ping, a user mention or a disguised link.
 */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/**
 * A mrkdwn link `<url|label>`: the label escaped like any text, and in the URL `&` as `&amp;`
 * (Slack reads entities there too) and the characters that would end the link early (`<`, `>`,
 * `|`) percent-encoded, which a URL means the same by.
 */
export function mrkdwnLink(url: string, label: string): string {
  const href = url
    .replace(/&/g, '&amp;')
    .replace(/</g, '%3C')
    .replace(/>/g, '%3E')
    .replace(/\|/g, '%7C')
  return `<${href}|${escapeMrkdwn(label)}>`
}

/** Cut `text` to at most `max` UTF-16 units without splitting an entity or a surrogate pair. */
export function truncateText(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false }
  let cut = text.slice(0, Math.max(0, max))
  cut = cut.replace(/&[a-z]{0,3}$/, '') // half of &amp; / &lt; / &gt;
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1)
  return { text: cut, truncated: true }
}

/** A Slack date token that each reader sees in their own time zone, with a UTC fallback. */
export function slackDate(ms: number): string {
  const seconds = Math.floor(ms / 1000)
  const fallback = new Date(seconds * 1000).toISOString().replace(/:\d\d\.\d{3}Z$/, ' UTC')
  return `<!date^${seconds}^{date_short_pretty} {time}|${fallback.replace('T', ' ')}>`
}

/**
 * `<@U…>` for a Slack person, recorded as `slack:U…` (or, in decisions stored before that, the
 * bare user id); anything else (e.g. an API token's name) is shown escaped.
 */
export function userRef(id: string): string {
  const user = id.replace(/^slack:/, '')
  return /^[UW][A-Z0-9]+$/.test(user) ? `<@${user}>` : escapeMrkdwn(id)
}

/**
 * Pretty JSON inside a ``` block, escaped and cut to `max` characters in all. A backtick can only
 * occur inside a JSON string, where `\u0060` means the same, so the fence can never be closed early.
 */
export function jsonCodeBlock(value: unknown, max: number): { text: string; truncated: boolean } {
  const json = (JSON.stringify(value, null, 2) ?? 'null').replace(/`/g, '\\u0060')
  const body = truncateText(escapeMrkdwn(json), max - '```\n\n```'.length)
  return { text: '```\n' + body.text + '\n```', truncated: body.truncated }
}
