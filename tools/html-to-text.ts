/**
 * HTML reduced to the text a reader would see, for `http_get`, with the Workers runtime's own
 * streaming HTML parser (`HTMLRewriter`): scripts, styles and other hidden elements are skipped,
 * block elements become line breaks, whitespace is collapsed. The parser hands text over as it
 * appears in the source (`&amp;` stays `&amp;`), so each text node is decoded once it is whole:
 * `&lt;script&gt;` in the page stays text and never becomes markup.
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

// Content never shown in the page. The title is read apart; <head> itself is not listed, since
// its end tag is optional and everything it holds that has text is listed here.
const HIDDEN = 'script, style, noscript, template, svg, title'
const BLOCK =
  'p, div, h1, h2, h3, h4, h5, h6, ul, ol, dl, table, thead, tbody, section, article, header, ' +
  'footer, nav, main, aside, blockquote, pre, form, fieldset, figure, figcaption'
// Void elements: a line break where they stand (they have no end tag to wait for).
const BREAK = 'br, hr'
// Rows end a line without a blank one between them, as list items do.
const ROW = 'tr, dt, dd'
const CELL = 'td, th'

/** Readable text of an HTML document (title first when the page has one). */
export async function htmlToText(html: string): Promise<string> {
  const out: string[] = []
  let hidden = 0
  let title: string[] | null = null
  let inTitle = false
  let node = ''
  const rewriter = new HTMLRewriter()
    .on(HIDDEN, {
      element(el) {
        if (el.tagName === 'title' && hidden === 0 && title === null) {
          title = []
          inTitle = true
        }
        hidden++
        el.onEndTag(() => {
          hidden--
          inTitle = false
        })
      },
    })
    .on(BLOCK, {
      element(el) {
        out.push('\n')
        el.onEndTag(() => void out.push('\n'))
      },
    })
    .on(BREAK, { element: () => void out.push('\n') })
    .on('li', { element: () => void out.push('\n- ') })
    .on(CELL, { element: (el) => el.onEndTag(() => void out.push('\t')) })
    .on(ROW, { element: (el) => el.onEndTag(() => void out.push('\n')) })
    .onDocument({
      text(chunk) {
        // A text node may arrive in several chunks; an entity may straddle two of them.
        node += chunk.text
        if (!chunk.lastInTextNode) return
        if (inTitle) title!.push(decodeEntities(node))
        else if (hidden === 0) out.push(decodeEntities(node))
        node = ''
      },
    })
  await rewriter.transform(new Response(html)).arrayBuffer()
  const text = collapseWhitespace(out.join(''))
  const heading = title ? collapseWhitespace((title as string[]).join('')) : ''
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
