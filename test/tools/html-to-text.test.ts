import { describe, expect, it } from 'vitest'
import { decodeEntities, htmlToText } from '../../tools/html-to-text'

describe('htmlToText', () => {
  it.each([
    ['<p>a</p><p>b</p>', 'a\n\nb'],
    ['a<br>b<br/>c', 'a\nb\nc'],
    ['<script>var x = "<p>no</p>"</script>shown', 'shown'],
    ['<style>p { color: red }</style><noscript>js off</noscript>text', 'text'],
    ['before<script>never closed', 'before'],
    ['<!-- a comment -->visible', 'visible'],
    ['<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>', 'a b\nc'],
    ['<p>  lots \t of\n\n\n\n   space  </p>', 'lots of\n\nspace'],
    ['&lt;script&gt;alert(1)&lt;/script&gt;', '<script>alert(1)</script>'],
    ['<a href="/x">link <em>text</em></a>', 'link text'],
    ['<html><head><title>T &amp; C</title></head><body><p>body</p></body></html>', 'T & C\n\nbody'],
    ['<title>Same</title><h1>Same</h1>', 'Same'],
    // What a parser reads right and a pattern over the source did not:
    ['<p title="a > b">x</p><div data-x="<script>">shown</div>', 'x\n\nshown'],
    ['<html><head><meta charset="utf-8"><body><p>no end to head</p>', 'no end to head'],
    ['<svg><title>icon</title><text>chart</text></svg><p>page</p>', 'page'],
    ['<!-- <p>old</p> --><p>new</p>', 'new'],
    ['<p>a &amp;lt; b</p>', 'a &lt; b'],
    ['<ul><li>one<li>two</ul>', '- one\n- two'],
  ])('%j → %j', async (html, text) => {
    expect(await htmlToText(html)).toBe(text)
  })

  it('decodes an entity that straddles two chunks of a long text node', async () => {
    const long = 'x'.repeat(70_000)
    expect(await htmlToText(`<p>${long}&amp;${long}</p>`)).toBe(`${long}&${long}`)
  })

  it.each([
    ['&amp;&lt;&gt;&quot;&apos;', '&<>"\''],
    ['&#39;&#x41;&#X42;&#128512;', "'AB😀"],
    ['&mdash;&ndash;&hellip;&rsquo;&copy;', '—–…’©'],
    ['&unknown; &#0; &#x110000; & plain', '&unknown; &#0; &#x110000; & plain'],
  ])('decodes %j', (input, output) => {
    expect(decodeEntities(input)).toBe(output)
  })
})
