/**
 * Encryption at rest for what must be stored but never read by anyone who reads the store (an MCP
 * connection's OAuth tokens, docs/mcp.md#where-tokens-live): AES-256-GCM with a random 96-bit IV
 * per value, and the record's own key as additional data, so a sealed value copied to another
 * record does not open there. A sealed value names the key it was sealed with (the first 8 hex of
 * the key's SHA-256), so keys rotate: new values are sealed with the current key, and a value
 * sealed with the previous one still opens and is sealed again with the current one on its next
 * write.
 */
import { toHex } from './hex'

const VERSION = 'v1'

/** One AES-256 key, with the id sealed values carry. */
interface SealingKey {
  id: string
  key: CryptoKey
}

/** The current key and, during a rotation, the previous one. */
export class SealedBox {
  private constructor(
    private readonly current: SealingKey,
    private readonly previous: SealingKey | null,
  ) {}

  /**
   * Imports the keys: each is 32 random bytes, base64 (`openssl rand -base64 32`). Throws a
   * TypeError saying what is wrong with a key (never its value).
   */
  static async fromKeys(current: string, previous?: string): Promise<SealedBox> {
    return new SealedBox(
      await importKey(current, 'current'),
      previous ? await importKey(previous, 'previous') : null,
    )
  }

  /** Seals `plain` for the record `recordKey` with the current key. */
  async seal(plain: string, recordKey: string): Promise<string> {
    const iv = crypto.getRandomValues(new Uint8Array(12))
    const cipher = await crypto.subtle.encrypt(
      { name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(recordKey) },
      this.current.key,
      new TextEncoder().encode(plain),
    )
    return [VERSION, this.current.id, toBase64(iv), toBase64(new Uint8Array(cipher))].join('.')
  }

  /**
   * Opens a sealed value of the record `recordKey`; null when it was sealed with a key this box
   * does not hold, for another record, or was altered (nothing is read from such a value).
   */
  async open(sealed: string, recordKey: string): Promise<string | null> {
    const [version, id, iv, cipher] = sealed.split('.')
    if (version !== VERSION || !iv || !cipher) return null
    const key = [this.current, this.previous].find((k) => k?.id === id)?.key
    if (!key) return null
    try {
      const plain = await crypto.subtle.decrypt(
        {
          name: 'AES-GCM',
          iv: fromBase64(iv),
          additionalData: new TextEncoder().encode(recordKey),
        },
        key,
        fromBase64(cipher),
      )
      return new TextDecoder().decode(plain)
    } catch {
      // An altered value, or one sealed for another record: the same as no value.
      return null
    }
  }

  /** Whether `sealed` was sealed with the current key (else it is sealed again when written). */
  isCurrent(sealed: string): boolean {
    return sealed.split('.')[1] === this.current.id
  }
}

async function importKey(encoded: string, which: string): Promise<SealingKey> {
  let raw: Uint8Array
  try {
    raw = fromBase64(encoded.trim())
  } catch {
    throw new TypeError(`the ${which} key is not base64; make one with \`openssl rand -base64 32\``)
  }
  if (raw.length !== 32) {
    throw new TypeError(
      `the ${which} key must be 32 bytes (base64 of 32 random bytes, \`openssl rand -base64 32\`); it has ${raw.length}`,
    )
  }
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', raw))
  const key = await crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt'])
  return { id: toHex(digest).slice(0, 8), key }
}

function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (const b of bytes) binary += String.fromCharCode(b)
  return btoa(binary)
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}
