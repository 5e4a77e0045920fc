/** Identifier formats checked in more than one layer below the kernel; each is defined here only. */

/** A lower-case hex SHA-256 (an approval's argument hash, an HMAC-SHA256 signature). */
export const SHA256_HEX_PATTERN = /^[0-9a-f]{64}$/
