/** Formats recognised in more than one layer below the kernel; each is defined here only. */

/** A lower-case hex SHA-256 (an approval's argument hash, an HMAC-SHA256 signature). */
export const SHA256_HEX_PATTERN = /^[0-9a-f]{64}$/

/**
 * An OpenAI-style secret key (`sk-…`, `sk-proj-…`), whoever's it is: redacted from what is stored
 * or logged, and from model errors (security/redactor.ts). Global, for `replace`.
 */
export const OPENAI_KEY_PATTERN = /\bsk-[A-Za-z0-9_-]{8,}/g
