/**
 * HTML reduced to the text a reader would see, for `http_get`. Not a browser: scripts, styles
 * and markup go, block elements become line breaks, common entities are decoded, whitespace is
 * collapsed. Entities are decoded last so that `&lt;script&gt;` in the page stays text.
 */

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  ndash: '–',
  mdash: '—',
  hellip: '…',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  laquo: '«',
  raquo: '»',
  bull: '•',
  middot: '·',
  copy: '©',
  reg: '®',
  trade: '™',
  deg: '°',
  times: '×',
  euro: '€',
}

// Elements whose content is never shown in the page (the title is taken out first).
const HIDDEN = /<(script|style|noscript|template|svg|head|title)\b[^>]*>[\s\S]*?(?:<\/\1\s*>|$)/gi
const COMMENT = /<!--[\s\S]*?(?:-->|$)/g
const BLOCK =
  /<\/?(?:p|div|br|hr|h[1-6]|ul|ol|dl|table|thead|tbody|section|article|header|footer|nav|main|aside|blockquote|pre|form|fieldset|figure|figcaption)\b[^>]*>/gi
const LIST_ITEM = /<li\b[^>]*>/gi
// Rows end a line without a blank one between them, as list items do.
const ROW_END = /<\/(?:tr|dt|dd)\s*>/gi
const CELL = /<\/t[dh]\s*>/gi
const TAG = /<\/?[a-zA-Z][^>]*>|<![^>]*>/g

/** Readable text of an HTML document (title first when the page has one). */
export function htmlToText(html: string): string {
  const title = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html)?.[1]
  const body = html
    .replace(COMMENT, '')
    .replace(HIDDEN, '')
    .replace(LIST_ITEM, '\n- ')
    .replace(CELL, '\t')
    .replace(ROW_END, '\n')
    .replace(BLOCK, '\n')
    .replace(TAG, '')
  const text = collapseWhitespace(decodeEntities(body))
  const heading = title ? collapseWhitespace(decodeEntities(title.replace(TAG, ''))) : ''
  return heading && !text.startsWith(heading) ? `${heading}\n\n${text}` : text
}

/** Decodes named entities from a common set plus every numeric one (`&#39;`, `&#x2014;`). */
export function decodeEntities(text: string): string {
  return text.replace(/&(#[xX][0-9a-fA-F]{1,6}|#\d{1,7}|[a-zA-Z]{2,8});/g, (whole, ref: string) => {
    if (ref[0] !== '#') return NAMED_ENTITIES[ref.toLowerCase()] ?? whole
    const code =
      ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10)
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
  })
}

function collapseWhitespace(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/[ \t\r\f\v\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}
