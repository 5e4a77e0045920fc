/**
 * Which hosts a callback must never be sent to unless an operator allowlists them:
 * loopback, private, link-local and cloud-metadata addresses, local names, and numeric hosts
 * written in a non-standard form (`2130706433`, `0x7f.1`) that exist only to slip past checks.
 * Works on the WHATWG-parsed URL (which turns every IPv4 spelling into dotted decimal) plus the
 * host as written.
 */

/** The rule a host breaks, and why that rule exists; undefined for a public host. */
export interface AddressRule {
  rule: string
  why: string
}

const V4_RULES: [cidr: string, rule: string, why: string][] = [
  ['0.0.0.0/8', 'unspecified', '"this network" (0.0.0.0/8) reaches the host itself'],
  ['10.0.0.0/8', 'private', 'a private network address (RFC 1918)'],
  ['100.64.0.0/10', 'private', 'a carrier-grade NAT address (RFC 6598)'],
  ['127.0.0.0/8', 'loopback', 'a loopback address'],
  ['169.254.169.254/32', 'metadata', 'the cloud instance-metadata address'],
  ['169.254.0.0/16', 'link_local', 'a link-local address'],
  ['172.16.0.0/12', 'private', 'a private network address (RFC 1918)'],
  ['192.0.0.0/24', 'reserved', 'an IETF protocol assignment (192.0.0.0/24)'],
  ['192.0.2.0/24', 'reserved', 'a documentation address (TEST-NET-1)'],
  ['192.168.0.0/16', 'private', 'a private network address (RFC 1918)'],
  ['198.18.0.0/15', 'reserved', 'a benchmarking address (198.18.0.0/15)'],
  ['198.51.100.0/24', 'reserved', 'a documentation address (TEST-NET-2)'],
  ['203.0.113.0/24', 'reserved', 'a documentation address (TEST-NET-3)'],
  ['224.0.0.0/4', 'multicast', 'a multicast address'],
  ['240.0.0.0/4', 'reserved', 'a reserved address (240.0.0.0/4, broadcast)'],
]

const V4_TABLE = V4_RULES.map(([cidr, rule, why]) => {
  const [base, bits] = cidr.split('/') as [string, string]
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0
  return { net: (ipv4ToInt(base)! & mask) >>> 0, mask, rule, why }
})

const LOCAL_SUFFIXES = ['.localhost', '.local', '.internal', '.localdomain', '.home.arpa', '.lan']

/**
 * The rule `url`'s host breaks, given the host as the caller wrote it (`written`, to catch
 * numeric encodings the parser has already normalised), or undefined when the host is public.
 */
export function forbiddenAddress(url: URL, written: string | undefined): AddressRule | undefined {
  const host = url.hostname.toLowerCase().replace(/\.$/, '')
  if (host.startsWith('[')) return ipv6Rule(host.slice(1, -1))
  const v4 = ipv4ToInt(host)
  if (v4 !== undefined) {
    const asWritten = written?.toLowerCase().replace(/\.$/, '')
    if (asWritten !== undefined && asWritten !== host) {
      return {
        rule: 'numeric_encoding',
        why: `the address is written in a non-standard numeric form ("${written}" is ${host})`,
      }
    }
    return ipv4Rule(v4)
  }
  if (host === 'localhost' || LOCAL_SUFFIXES.some((s) => host.endsWith(s))) {
    return { rule: 'local_name', why: `${host} is a local name` }
  }
  if (!host.includes('.')) {
    return { rule: 'local_name', why: `${host} is a single-label (intranet) name` }
  }
  return undefined
}

/** The host part of an absolute URL exactly as written (no userinfo, no port), if any. */
export function writtenHost(raw: string): string | undefined {
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(raw.trim())
  if (!m) return undefined
  const authority = m[1]!.slice(m[1]!.lastIndexOf('@') + 1)
  if (authority.startsWith('[')) return authority.slice(0, authority.indexOf(']') + 1)
  return authority.replace(/:\d*$/, '')
}

function ipv4Rule(value: number): AddressRule | undefined {
  const hit = V4_TABLE.find((r) => (value & r.mask) >>> 0 === r.net)
  return hit ? { rule: hit.rule, why: hit.why } : undefined
}

function ipv6Rule(text: string): AddressRule | undefined {
  const g = ipv6Groups(text)
  if (!g)
    return { rule: 'reserved', why: `"${text}" is not an IPv6 address this check understands` }
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0)
  const embedded = () => ((g[6]! << 16) | g[7]!) >>> 0
  if (zeroUpTo(7) && g[7] === 1) return { rule: 'loopback', why: 'the IPv6 loopback address (::1)' }
  if (zeroUpTo(8)) return { rule: 'unspecified', why: 'the unspecified IPv6 address (::)' }
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), 64:ff9b::a.b.c.d (NAT64) carry an IPv4
  // address that is what is really reached.
  const mapped = zeroUpTo(5) && (g[5] === 0xffff || g[5] === 0)
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)
  if (mapped || nat64) {
    const inner = ipv4Rule(embedded())
    const v4 = [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].join('.')
    return inner
      ? { rule: inner.rule, why: `an IPv6 form of ${v4}, ${inner.why}` }
      : { rule: 'ipv4_mapped', why: `an IPv6 form of ${v4}; write the IPv4 address itself` }
  }
  if ((g[0]! & 0xffc0) === 0xfe80) return { rule: 'link_local', why: 'a link-local IPv6 address' }
  if ((g[0]! & 0xfe00) === 0xfc00) {
    return { rule: 'private', why: 'a unique-local IPv6 address (fc00::/7, incl. fd00:ec2::254)' }
  }
  if ((g[0]! & 0xff00) === 0xff00) return { rule: 'multicast', why: 'a multicast IPv6 address' }
  if (g[0] === 0x2001 && g[1] === 0xdb8) {
    return { rule: 'reserved', why: 'a documentation IPv6 address' }
  }
  if (g[0] === 0x2002) {
    const inner = ipv4Rule(((g[1]! << 16) | g[2]!) >>> 0)
    if (inner) return { rule: inner.rule, why: `a 6to4 address around ${inner.why}` }
  }
  return undefined
}

/** Dotted-decimal IPv4 (the parser's canonical form) as an unsigned 32-bit number. */
function ipv4ToInt(host: string): number | undefined {
  const parts = host.split('.')
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) {
    return undefined
  }
  return parts.reduce((n, p) => ((n << 8) | Number(p)) >>> 0, 0)
}

/** The eight 16-bit groups of an IPv6 address (`::` and a dotted IPv4 tail expanded). */
function ipv6Groups(text: string): number[] | undefined {
  let s = text.toLowerCase()
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s)
  if (tail) {
    const v4 = ipv4ToInt(tail[1]!)
    if (v4 === undefined) return undefined
    s = `${s.slice(0, -tail[1]!.length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`
  }
  const halves = s.split('::')
  if (halves.length > 2) return undefined
  const head = halves[0] ? halves[0].split(':') : []
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : []
  const missing = 8 - head.length - rest.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest]
  if (!groups.every((x) => /^[0-9a-f]{1,4}$/.test(x))) return undefined
  return groups.map((x) => parseInt(x, 16))
}
