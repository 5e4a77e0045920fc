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
  ])('%j → %j', (html, text) => {
    expect(htmlToText(html)).toBe(text)
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
