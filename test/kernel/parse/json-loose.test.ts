import { describe, expect, it } from 'vitest'
import {
  MAX_LOOSE_JSON_CHARS,
  parseArgsStrict,
  parseArgsTolerant,
  scanJsonObjects,
  scanObjects,
} from '../../../src/kernel/parse/json-loose'

// Speed is measured in `npm run bench -- kernel`; tests check the work done, deterministically.

describe('scanJsonObjects', () => {
  it.each([
    ['one object', '{"a":1}', ['{"a":1}']],
    ['object in prose', 'before {"a": {"b": 2}} after', ['{"a": {"b": 2}}']],
    ['two objects', '{"a":1} and {"b":2}', ['{"a":1}', '{"b":2}']],
    ['braces inside strings', '{"s": "} { \\" }"}', ['{"s": "} { \\" }"}']],
    ['escaped backslash before quote', '{"s": "x\\\\"} {"t": 1}', ['{"s": "x\\\\"}', '{"t": 1}']],
    ['prose braces skipped', 'I think {x} matters. {"a": 1}', ['{"a": 1}']],
    ['unmatched prose brace before', 'a { stray brace. {"a": 1}', ['{"a": 1}']],
    ['prose quote after a stray brace', 'a {5" screen. {"a": 1}', ['{"a": 1}']],
    ['object inside prose braces', '{see {"a": 1}}', ['{"a": 1}']],
    ['stray closing brace', '} oops {"a": 1}', ['{"a": 1}']],
    ['loose object with bare key', "{a: 'b'}", ["{a: 'b'}"]],
    ['empty object', 'use {} here', ['{}']],
    // A cut-off object's members are not objects of their own.
    ['inner object of a truncated one', '{"a": {"b": 1}', []],
    ['second draft after a broken first', '{"a": 1 "b"}\n{"c": 2}', ['{"c": 2}']],
    ['full-width braces', '｛"a"：1｝', ['｛"a"：1｝']],
    ['truncated object', '{"a": {"b": 1', []],
    ['nothing', 'no braces at all', []],
  ])('%s', (_name, text, expected) => {
    const spans = scanJsonObjects(text)
    expect(spans.map((s) => s.text)).toEqual(expected)
    for (const s of spans) expect(text.slice(s.start, s.end)).toBe(s.text)
  })

  it.each([
    ['a megabyte of braces', '{ '.repeat(250_000) + '{x} "'.repeat(50_000) + '{"a": 1}'],
    ['nested unclosed objects', '{"a": '.repeat(100_000) + '1' + '}'.repeat(99_999) + ' x'],
    ['broken drafts on every line', '{"a": "x}\n'.repeat(100_000) + '{"a": 1}'],
    ['deep nesting that fails at the end', '{"a":\n'.repeat(50_000) + 'x'],
  ])('reads %s in linear work', (_name, text) => {
    const scan = scanObjects(text)
    expect(scan.work).toBeLessThanOrEqual(5 * text.length)
  })
})

describe('parseArgsStrict', () => {
  it.each([
    ['object', '{"q": "x", "n": 2}', { q: 'x', n: 2 }],
    ['empty string', '', {}],
    ['whitespace', '  \n', {}],
    ['empty object', '{}', {}],
  ])('accepts %s', (_name, raw, value) => {
    expect(parseArgsStrict(raw)).toEqual({ ok: true, value })
  })

  it.each([
    ['trailing comma', '{"a": 1,}', /^arguments are not valid JSON: .+/],
    ['truncated', '{"a": 1', /^arguments are not valid JSON: .+/],
    ['single quotes', "{'a': 1}", /^arguments are not valid JSON: .+/],
    ['prose', 'search for cats', /^arguments are not valid JSON: .+/],
    ['array', '[1, 2]', /^arguments must be a JSON object, got array$/],
    ['string', '"{\\"a\\": 1}"', /^arguments must be a JSON object, got string$/],
    ['null', 'null', /^arguments must be a JSON object, got null$/],
    ['number', '42', /^arguments must be a JSON object, got number$/],
  ])('rejects %s', (_name, raw, error) => {
    const result = parseArgsStrict(raw)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.error).toMatch(error)
  })

  it('names the position of a syntax error', () => {
    const result = parseArgsStrict('{"a": 1 "b": 2}')
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.error).toMatch(/position 8/)
  })
})

describe('parseArgsTolerant', () => {
  it.each([
    ['valid JSON', '{"a": 1}', { a: 1 }, false],
    ['empty', '', {}, false],
    ['json fence', '```json\n{"a": 1}\n```', { a: 1 }, true],
    ['bare fence', '```\n{"a": 1}\n```', { a: 1 }, true],
    ['prose around', 'Here you go: {"a": 1} hope it helps', { a: 1 }, true],
    ['trailing commas', '{"a": [1, 2,], "b": 3,}', { a: [1, 2], b: 3 }, true],
    ['single quotes', "{'a': 'it\\'s \"x\"'}", { a: 'it\'s "x"' }, true],
    ['unquoted keys', '{a: 1, b_c: {d: "e"}}', { a: 1, b_c: { d: 'e' } }, true],
    ['python literals', "{'a': True, 'b': False, 'c': None}", { a: true, b: false, c: null }, true],
    ['raw newline in string', '{"a": "line1\nline2"}', { a: 'line1\nline2' }, true],
    ['stray brace in prose before', 'use { then {"a": 1}', { a: 1 }, true],
    ['double encoded', '"{\\"a\\": 1}"', { a: 1 }, true],
    ['string value with a colon', '{"url": "http://x.test/a"}', { url: 'http://x.test/a' }, false],
    ['words inside strings untouched', "{'a': 'True None'}", { a: 'True None' }, true],
    ['smart quotes as syntax', '{“city”: “Paris”}', { city: 'Paris' }, true],
    ['smart quotes inside a value kept', '{"q": "say “hi”"}', { q: 'say “hi”' }, false],
    ['full-width punctuation', '｛"city"："北京"，"days"：3｝', { city: '北京', days: 3 }, true],
    ['full-width comma in a value kept', '{"q": "北京，上海"}', { q: '北京，上海' }, false],
  ])('%s', (_name, raw, value, repaired) => {
    expect(parseArgsTolerant(raw)).toEqual({ ok: true, value, repaired })
  })

  it.each([
    ['an array', '[{"a": 1}]', /got array/],
    ['a plain string', '"hello"', /got string/],
    ['prose only', 'search for cats', /could not be repaired/],
    ['garbage inside braces', '{"a": 1 2 3}', /could not be repaired/],
    ['a truncated object', '{"a": {"b": [1, 2', /never closes/],
    ['a truncated string', '{"a": "hel', /never closes/],
    ['a cut after a key', '{"a": 1, "b":', /never closes/],
    ['a cut after a comma', '{"a": 1,', /never closes/],
    ['a cut with nested members', '{"f": {"a": 1}, "q": "x', /never closes/],
    ['a truncated fence', '```json\n{"a": 1', /never closes/],
  ])('refuses %s', (_name, raw, error) => {
    const result = parseArgsTolerant(raw)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.error).toMatch(error)
  })

  it('refuses input over the size limit without working on it', () => {
    const result = parseArgsTolerant(`{"a": "${'x'.repeat(MAX_LOOSE_JSON_CHARS)}"`)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.error).toMatch(/repair limit/)
  })

  it.each([
    ['an unclosed fence of blanks', '```\n' + ' '.repeat(500_000)],
    ['a fence line of blanks', '```' + ' \t'.repeat(250_000) + 'x\nno object'],
    ['a long bare word', '{' + 'a'.repeat(500_000)],
  ])('gives up on %s', (_name, raw) => {
    expect(parseArgsTolerant(raw).ok).toBe(false)
  })

  it('repairs a large object and refuses it cut off', () => {
    const items = '{"k": \'v\', },'.repeat(30_000)
    const whole = parseArgsTolerant(`{"items": [${items}]}`)
    expect(whole.ok && (whole.value.items as unknown[]).length).toBe(30_000)
    expect(parseArgsTolerant(`{"items": [${items}`).ok).toBe(false)
  })
})
