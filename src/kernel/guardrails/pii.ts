import type { Guardrail } from './guardrail'
import { rewriteVerdict } from './text-values'

/**
 * Personal data redaction (docs/guardrails.md#pii): emails, phone numbers, payment card numbers
 * (Luhn-checked) and IBANs (mod-97-checked) become `[email]`, `[phone]`, `[card]`, `[iban]`.
 */

// Written out, or with the @ and dots spelled as [at] (at) {at} and [dot] (dot) {dot}.
const AT = String.raw`(?:@|\s*[[({]\s*at\s*[\])}]\s*)`
const DOT = String.raw`(?:\.|\s*[[({]\s*dot\s*[\])}]\s*)`
const EMAIL = new RegExp(
  String.raw`[A-Za-z0-9][A-Za-z0-9._%+-]*${AT}[A-Za-z0-9-]+(?:${DOT}[A-Za-z0-9-]+)*${DOT}[A-Za-z]{2,24}\b`,
  'gi',
)
// 2 letters, 2 check digits, then groups of 4 letters or digits (spaced or not), a shorter last.
const IBAN = /\b[A-Z]{2}\d{2}(?:[ -]?[A-Z0-9]{4}){2,7}(?:[ -]?[A-Z0-9]{1,3})?\b/gi
// 13–19 digits, in groups split by single spaces or dashes.
const CARD = /\b\d(?:[ -]?\d){12,18}\b/g
// A phone number: international (a leading +, then groups of digits, an area code in
// parentheses or not), or national (digit groups split by spaces, dots or dashes, an area code
// in parentheses or not); 9–15 digits in all (isPhone).
const PHONE =
  /\+\d{1,3}(?:[\s.-]?(?:\(\d{1,4}\)|\d{1,8})){1,6}\b|(?:\(\d{2,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]\d{2,4}){1,4}\b/g
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/
const DATE = /^\d{4}[-./]\d{1,2}[-./]\d{1,2}$|^\d{1,2}[-./]\d{1,2}[-./]\d{2,4}$/

/** The Luhn checksum of a card number's digits holds. */
export function luhn(digits: string): boolean {
  let sum = 0
  for (let k = 0; k < digits.length; k++) {
    let d = digits.charCodeAt(digits.length - 1 - k) - 48
    if (k % 2 === 1) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return sum % 10 === 0
}

/** The IBAN's mod-97 check holds (ISO 13616). */
export function ibanValid(text: string): boolean {
  const iban = text.replace(/[ -]/g, '').toUpperCase()
  if (iban.length < 15 || iban.length > 34) return false
  const moved = iban.slice(4) + iban.slice(0, 4)
  let rest = 0
  for (const ch of moved) {
    const n = ch >= 'A' ? String(ch.charCodeAt(0) - 55) : ch
    for (const d of n) rest = (rest * 10 + Number(d)) % 97
  }
  return rest === 1
}

/** `text` with the personal data this guardrail knows replaced. */
export function redactPii(text: string): string {
  return text
    .replace(EMAIL, '[email]')
    .replace(IBAN, (m) => (ibanValid(m) ? '[iban]' : m))
    .replace(CARD, (m) => (luhn(m.replace(/\D/g, '')) ? '[card]' : m))
    .replace(PHONE, (m) => (isPhone(m) ? '[phone]' : m))
}

function isPhone(match: string): boolean {
  const digits = match.replace(/\D/g, '').length
  if (digits < 9 || digits > 15) return false
  const trimmed = match.trim()
  return !IPV4.test(trimmed) && !DATE.test(trimmed)
}

/** The shipped `pii` guardrail: a rewrite with the personal data replaced. */
export function piiRedaction(name = 'pii'): Guardrail {
  return {
    name,
    check: (value) => rewriteVerdict(value, redactPii, 'personal data redacted'),
  }
}
