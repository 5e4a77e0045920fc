import { describe, expect, it } from 'vitest'
import { mrkdwnLink } from '../../src/slack/mrkdwn'

/**
 * A link in mrkdwn (docs/slack-app.md#connections): Slack reads `&`, `<` and `>` as control
 * characters in the whole text, the URL of a `<url|label>` included, and ends the URL at `|`.
 */
describe('mrkdwnLink', () => {
  it.each([
    [
      'https://edgeloop.test/oauth/connect/abc_DEF-1',
      'Connect wiki',
      '<https://edgeloop.test/oauth/connect/abc_DEF-1|Connect wiki>',
    ],
    ['https://a.test/x?a=1&b=2', 'A & B', '<https://a.test/x?a=1&amp;b=2|A &amp; B>'],
    ['https://a.test/<x>|y', '<!channel>', '<https://a.test/%3Cx%3E%7Cy|&lt;!channel&gt;>'],
  ])('%s labelled %s', (url, label, expected) => {
    expect(mrkdwnLink(url, label)).toBe(expected)
  })
})
