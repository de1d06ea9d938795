/**
 * Which addresses a webhook may reach: public unicast only (PRODUCT P18, OWASP API7:2023).
 *
 * An allowlist, not a list of bad ranges: an IPv4 address is public when it is in none of IANA's special-purpose
 * ranges; an IPv6 address when it is in 2000::/3 (the only block IANA allocates for global unicast) and in none of
 * the special-purpose ranges inside it. ipaddr.js holds the ranges (IANA's IPv4 and IPv6 Special-Purpose Address
 * Registries, with their RFCs), so a range IANA adds arrives with the library rather than with an edit here.
 *
 * The transition forms that carry an IPv4 address inside an IPv6 one (IPv4-mapped, IPv4-compatible, SIIT, NAT64,
 * 6to4, Teredo) are refused whatever they carry: where such an address leads is up to a translator or relay we do
 * not control (a NAT64 gateway in our own network would happily translate 64:ff9b::10.0.0.1), and a receiver on
 * the public Internet always has a native address. The verdict still names the carried IPv4 address and its class,
 * so that the refusal says what the address really pointed at.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Why an address is not one a webhook may reach. */
export type RefusedKind =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'metadata'
  | 'shared'
  | 'multicast'
  | 'broadcast'
  | 'unspecified'
  | 'reserved'
  | 'special-purpose'
  | 'ipv4-mapped'
  | 'ipv4-compatible'
  | 'ipv4-translated'
  | 'nat64'
  | '6to4'
  | 'teredo'
  | 'not-global'
  | 'scoped'
  | 'not-an-address';

export type AddressVerdict =
  | { readonly public: true; readonly address: string; readonly family: 4 | 6 }
  | {
      readonly public: false;
      /** Normalised (dotted IPv4, RFC 5952 IPv6), or the text as given when it is not an address. */
      readonly address: string;
      readonly family: 4 | 6 | undefined;
      readonly kind: RefusedKind;
      /** The IPv4 address a transition form carries, classified in its own right. */
      readonly embeds?: AddressVerdict;
    };

const LABELS: Record<RefusedKind, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  'link-local': 'a link-local address',
  metadata: "a cloud metadata service's address",
  shared: 'a shared (carrier-grade NAT) address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  unspecified: 'an unspecified ("this network") address',
  reserved: 'a reserved address (documentation, benchmarking or future use)',
  'special-purpose': 'a special-purpose address',
  'ipv4-mapped': 'an IPv4-mapped address',
  'ipv4-compatible': 'an IPv4-compatible address',
  'ipv4-translated': 'an IPv4-translated (SIIT) address',
  nat64: 'a NAT64 address',
  '6to4': 'a 6to4 address',
  teredo: 'a Teredo address',
  'not-global': 'outside the global unicast range 2000::/3',
  scoped: 'a scoped (zone) address',
  'not-an-address': 'not an IP address',
};

/** The addresses of the metadata and credential services of AWS's compute (EC2/Lambda IMDS, ECS task metadata). */
const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254', '169.254.170.2']);

const IPV4_RANGES: Record<string, RefusedKind> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'shared',
  private: 'private',
  reserved: 'reserved',
};

const IPV6_RANGES: Record<string, RefusedKind> = {
  unspecified: 'unspecified',
  linkLocal: 'link-local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'private',
  deprecatedSiteLocal: 'private',
  ipv4Mapped: 'ipv4-mapped',
  rfc6145: 'ipv4-translated',
  rfc6052: 'nat64',
  '6to4': '6to4',
  teredo: 'teredo',
  benchmarking: 'reserved',
  reserved: 'reserved',
  discard: 'reserved',
};

const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/** The IPv4 address a transition form carries where its RFC fixes the position (none for 64:ff9b:1::/48, whose operator chooses it). */
function carried(ip: ipaddr.IPv6, kind: RefusedKind): ipaddr.IPv4 | undefined {
  const p = ip.parts as [number, number, number, number, number, number, number, number];
  switch (kind) {
    case 'ipv4-mapped':
    case 'ipv4-translated':
    case 'ipv4-compatible':
      return v4(p[6], p[7]);
    case 'nat64':
      return ip.match(NAT64_WELL_KNOWN) ? v4(p[6], p[7]) : undefined;
    case '6to4':
      return v4(p[1], p[2]);
    case 'teredo':
      // RFC 4380: the client's public address, obfuscated (every bit inverted) in the last 32 bits.
      return v4(~p[6] & 0xffff, ~p[7] & 0xffff);
    default:
      return undefined;
  }
}

function refused(address: string, family: 4 | 6 | undefined, kind: RefusedKind, embeds?: AddressVerdict): AddressVerdict {
  return embeds ? { public: false, address, family, kind, embeds } : { public: false, address, family, kind };
}

function classifyIPv4(ip: ipaddr.IPv4): AddressVerdict {
  const address = ip.toString();
  const range = ip.range();
  if (range === 'unicast') return { public: true, address, family: 4 };
  if (METADATA.has(address)) return refused(address, 4, 'metadata');
  return refused(address, 4, IPV4_RANGES[range] ?? 'special-purpose');
}

function classifyIPv6(ip: ipaddr.IPv6): AddressVerdict {
  const address = ip.toRFC5952String();
  const range: string = ip.range();
  if (METADATA.has(address)) return refused(address, 6, 'metadata');
  let kind: RefusedKind | undefined = range === 'unicast' ? undefined : (IPV6_RANGES[range] ?? 'special-purpose');
  if (!kind && !ip.match(GLOBAL_UNICAST)) {
    // ::/96 (but :: and ::1, classified above) is RFC 4291's deprecated IPv4-compatible form.
    kind = ip.parts.slice(0, 6).every((part) => part === 0) ? 'ipv4-compatible' : 'not-global';
  }
  if (!kind) return { public: true, address, family: 6 };
  const inner = carried(ip, kind);
  return refused(address, 6, kind, inner ? classifyIPv4(inner) : undefined);
}

/**
 * The verdict on one address as a resolver or a URL's host gives it. Only the standard spellings are addresses
 * (dotted-decimal IPv4 as `net.isIP` reads it, IPv6 text): the WHATWG URL parser has already turned a URL's other
 * IPv4 spellings (2130706433, 0x7f.1, 017700000001) into dotted decimal, and a resolver answering anything else is
 * answering with something that is not an address.
 */
export function classifyAddress(text: string): AddressVerdict {
  const family = isIP(text);
  if (family === 0) return refused(text, undefined, 'not-an-address');
  // A zone id (fe80::1%eth0) names an interface of this machine: never a receiver on the Internet.
  if (text.includes('%')) return refused(text, 6, 'scoped');
  if (family === 4) return classifyIPv4(ipaddr.IPv4.parse(text));
  // ipaddr.js reads an IPv4-compatible ::a.b.c.d as ::ffff:a.b.c.d (another address); the URL parser's IPv6 reading
  // is exact, and hands ipaddr.js plain hexadecimal groups.
  let canonical: string;
  try {
    canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  } catch {
    return refused(text, undefined, 'not-an-address');
  }
  return classifyIPv6(ipaddr.IPv6.parse(canonical));
}

/** "10.0.0.1, a private address", "64:ff9b::a00:1, a NAT64 address carrying 10.0.0.1 (a private address)". */
export function describeAddress(verdict: AddressVerdict): string {
  if (verdict.public) return `${verdict.address}, a public address`;
  const inner = verdict.embeds;
  const carrying = inner ? ` carrying ${inner.address}${inner.public ? '' : ` (${LABELS[inner.kind]})`}` : '';
  return `${verdict.address}, ${LABELS[verdict.kind]}${carrying}`;
}
