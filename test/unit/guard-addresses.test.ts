/**
 * The outbound guard's address classes (lambdas/delivery/guard/address-classes.ts) against an oracle written here
 * from IANA's IPv4 and IPv6 Special-Purpose Address Registries and matched by node's own net.BlockList, not by
 * ipaddr.js: an IPv4 address is public exactly when no registry block (nor multicast 224/4) holds it; an IPv6
 * address exactly when it is in 2000::/3 and no registry block inside it holds it. Every block's edges are checked
 * exhaustively, random addresses (biased to the edges) as a property; then each class by name, and the transition
 * forms (IPv4-mapped, IPv4-compatible, SIIT, NAT64, 6to4, Teredo) for any IPv4 address they carry. Last, that the
 * guard stays a leaf and is the only folder under lambdas/ that opens a connection itself.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { BlockList } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { classifyAddress, describeAddress, type AddressVerdict } from '../../lambdas/delivery/guard/guard.js';
import { ROOT } from '../support/process.js';

/** IANA's IPv4 Special-Purpose Address Registry (RFC 6890 and its updates), with multicast (RFC 5771). */
const IPV4_BLOCKS: readonly [string, number][] = [
  ['0.0.0.0', 8], // "this network" (RFC 791); 0.0.0.0 itself reaches this host on Linux
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // shared address space, carrier-grade NAT (RFC 6598)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (RFC 3927): the metadata service at 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments (RFC 6890): DS-Lite, PCP and TURN anycast, NAT64 discovery
  ['192.0.2.0', 24], // TEST-NET-1, documentation (RFC 5737)
  ['192.31.196.0', 24], // AS112-v4 (RFC 7535)
  ['192.52.193.0', 24], // AMT (RFC 7450)
  ['192.88.99.0', 24], // the deprecated 6to4 relay anycast (RFC 7526)
  ['192.168.0.0', 16], // private
  ['192.175.48.0', 24], // direct delegation AS112 service (RFC 7534)
  ['198.18.0.0', 15], // benchmarking (RFC 2544)
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved for future use (RFC 1112), 255.255.255.255 the limited broadcast inside it
];
/** The registry's IPv6 blocks inside 2000::/3 (all the others lie outside it, so are refused by the allowlist). */
const IPV6_BLOCKS: readonly [string, number][] = [
  ['2001::', 23], // IETF protocol assignments: Teredo 2001::/32, benchmarking 2001:2::/48, AMT, AS112, ORCHIDv2, DRIP
  ['2001:db8::', 32], // documentation (RFC 3849)
  ['2002::', 16], // 6to4 (RFC 3056)
  ['2620:4f:8000::', 48], // direct delegation AS112 service
  ['3fff::', 20], // documentation (RFC 9637)
];

const v4list = new BlockList();
for (const [net, prefix] of IPV4_BLOCKS) v4list.addSubnet(net, prefix, 'ipv4');
const v6list = new BlockList();
for (const [net, prefix] of IPV6_BLOCKS) v6list.addSubnet(net, prefix, 'ipv6');

const U32 = 2 ** 32;
const dotted = (n: number) => [24, 16, 8, 0].map((shift) => (Math.floor(n / 2 ** shift) >>> 0) & 0xff).join('.');
const fromDotted = (text: string) => text.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
const MAX128 = (1n << 128n) - 1n;
const colons = (n: bigint) => Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':');
const fromColons = (text: string) => {
  const [head = '', tail = ''] = text.split('::');
  const h = head ? head.split(':') : [];
  const t = text.includes('::') ? (tail ? tail.split(':') : []) : [];
  const parts = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return parts.reduce((n, part) => (n << 16n) | BigInt(parseInt(part, 16)), 0n);
};

const publicV4 = (address: string) => !v4list.check(address, 'ipv4');
const publicV6 = (address: string) => fromColons(address) >> 125n === 1n && !v6list.check(address, 'ipv6');

/** Each block's first and last address and the one on either side, in the 32- or 128-bit space. */
const edges4 = IPV4_BLOCKS.flatMap(([net, prefix]) => {
  const first = fromDotted(net);
  const last = first + 2 ** (32 - prefix) - 1;
  return [first - 1, first, last, last + 1].filter((n) => n >= 0 && n < U32);
});
const edges6 = [...IPV6_BLOCKS, ['2000::', 3] as [string, number]].flatMap(([net, prefix]) => {
  const first = fromColons(net);
  const last = first + (1n << BigInt(128 - prefix)) - 1n;
  return [first - 1n, first, last, last + 1n].filter((n) => n >= 0n && n <= MAX128);
});

const anyV4 = fc.oneof(
  fc.integer({ min: 0, max: U32 - 1 }),
  fc.tuple(fc.constantFrom(...edges4), fc.integer({ min: -300, max: 300 })).map(([edge, d]) => Math.min(U32 - 1, Math.max(0, edge + d))),
);
const anyV6 = fc.oneof(
  fc.bigInt({ min: 0n, max: MAX128 }),
  fc.bigInt({ min: 0n, max: (1n << 125n) - 1n }).map((n) => (1n << 125n) | n),
  fc.tuple(fc.constantFrom(...edges6), fc.bigInt({ min: -(1n << 20n), max: 1n << 20n })).map(([edge, d]) => (edge + d < 0n ? 0n : edge + d > MAX128 ? MAX128 : edge + d)),
);

/** Each family, its addresses as numbers: its rule's words, its edges, any address, how one is written, the oracle, and the number back. */
interface Family {
  family: 4 | 6;
  rule: string;
  edges: readonly bigint[];
  any: fc.Arbitrary<bigint>;
  text: (n: bigint) => string;
  isPublic: (address: string) => boolean;
  back: (address: string) => bigint;
}
const FAMILIES: Family[] = [
  { family: 4, rule: 'outside every special-purpose block', edges: edges4.map(BigInt), any: anyV4.map(BigInt), text: (n) => dotted(Number(n)), isPublic: publicV4, back: (a) => BigInt(fromDotted(a)) },
  { family: 6, rule: 'inside 2000::/3 and outside its special-purpose blocks', edges: edges6, any: anyV6, text: colons, isPublic: publicV6, back: fromColons },
];

describe('which addresses are public', () => {
  it.each(FAMILIES)('IPv$family: public exactly $rule, at each edge of each block', ({ edges, text, isPublic }) => {
    for (const n of edges) expect([text(n), classifyAddress(text(n)).public]).toEqual([text(n), isPublic(text(n))]);
  });

  it.each(FAMILIES)('IPv$family: public exactly $rule, for any address', ({ family, any, text, isPublic, back }) => {
    fc.assert(
      fc.property(any, (n) => {
        const verdict = classifyAddress(text(n));
        expect(verdict.public).toBe(isPublic(text(n)));
        // One normal form (dotted, RFC 5952), whatever the spelling: what the connected socket's address is compared in.
        expect([verdict.family, back(verdict.address)]).toEqual([family, n]);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('the class an address is refused as', () => {
  const kinds: readonly [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fc00::1', 'private'],
    ['fec0::1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.9', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['2001:2::1', 'reserved'],
    ['100::1', 'reserved'],
    ['192.175.48.1', 'special-purpose'],
    ['192.52.193.1', 'special-purpose'],
    ['2620:4f:8000::1', 'special-purpose'],
    ['::ffff:10.0.0.1', 'ipv4-mapped'],
    ['::ffff:0:10.0.0.1', 'ipv4-translated'],
    ['::10.0.0.1', 'ipv4-compatible'],
    ['64:ff9b::10.0.0.1', 'nat64'],
    ['64:ff9b:1::a00:1', 'nat64'],
    ['2002:a00:1::1', '6to4'],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'teredo'],
    ['4000::1', 'not-global'],
    ['e000::1', 'not-global'],
    ['fe80::1%eth0', 'scoped'],
    ['0x7f.1', 'not-an-address'],
    ['2130706433', 'not-an-address'],
    ['127.1', 'not-an-address'],
    ['localhost', 'not-an-address'],
    ['', 'not-an-address'],
  ];

  it.each(kinds)('%s is refused as %s', (address, kind) => {
    expect(classifyAddress(address)).toMatchObject({ public: false, kind });
  });

  it('reads an IPv6 address with a dotted IPv4 tail as written (ipaddr.js alone reads ::a.b.c.d as ::ffff:a.b.c.d)', () => {
    expect(classifyAddress('::10.0.0.1').address).toBe('::a00:1');
    expect(classifyAddress('::ffff:10.0.0.1').address).toBe('::ffff:a00:1');
    expect(classifyAddress('2606:4700::1.2.3.4')).toEqual({ public: true, address: '2606:4700::102:304', family: 6 });
  });

  it('names the address and its class in a phrase of a sentence', () => {
    expect(describeAddress(classifyAddress('10.0.0.1'))).toBe('10.0.0.1, a private address');
    expect(describeAddress(classifyAddress('169.254.169.254'))).toBe("169.254.169.254, a cloud metadata service's address");
    expect(describeAddress(classifyAddress('64:ff9b::10.0.0.1'))).toBe('64:ff9b::a00:1, a NAT64 address carrying 10.0.0.1 (a private address)');
    expect(describeAddress(classifyAddress('::ffff:8.8.8.8'))).toBe('::ffff:808:808, an IPv4-mapped address carrying 8.8.8.8');
    expect(describeAddress(classifyAddress('8.8.8.8'))).toBe('8.8.8.8, a public address');
  });

  it('keeps public addresses public: a few real ones', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '93.184.215.14', '100.63.255.255', '100.128.0.0', '172.32.0.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '2001:4860:4860::8888']) {
      expect(classifyAddress(address)).toMatchObject({ public: true });
    }
  });
});

describe('transition forms: refused whatever IPv4 address they carry, which the verdict names', () => {
  const carries = (verdict: AddressVerdict, kind: string, inner: number) => {
    expect(verdict).toMatchObject({ public: false, family: 6, kind });
    const embeds = verdict.public ? undefined : verdict.embeds;
    expect(embeds).toMatchObject({ address: dotted(inner), public: publicV4(dotted(inner)) });
  };
  const hex = (n: number) => [Math.floor(n / 65536), n % 65536].map((part) => part.toString(16));

  it('IPv4-mapped, SIIT, NAT64 (well-known prefix), 6to4 and Teredo, for any IPv4 address', () => {
    fc.assert(
      fc.property(anyV4, anyV4, (n, server) => {
        const [hi, lo] = hex(n);
        carries(classifyAddress(`::ffff:${dotted(n)}`), 'ipv4-mapped', n);
        carries(classifyAddress(`::ffff:${hi}:${lo}`), 'ipv4-mapped', n);
        carries(classifyAddress(`::ffff:0:${dotted(n)}`), 'ipv4-translated', n);
        carries(classifyAddress(`64:ff9b::${dotted(n)}`), 'nat64', n);
        carries(classifyAddress(`2002:${hi}:${lo}::1`), '6to4', n);
        // RFC 4380: the server's address, then the flags and port, then the client's address with every bit inverted.
        const [inverted1, inverted2] = hex(U32 - 1 - n);
        carries(classifyAddress(`2001:0:${hex(server).join(':')}:8000:0:${inverted1}:${inverted2}`), 'teredo', n);
        // ::0.0.0.0 and ::0.0.0.1 are the unspecified and loopback addresses.
        if (n > 1) carries(classifyAddress(`::${dotted(n)}`), 'ipv4-compatible', n);
      }),
      { numRuns: 1000 },
    );
  });

  it("refuses NAT64's local-use prefix (64:ff9b:1::/48), whose carried address its operator places", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 80n) - 1n }), (suffix) => {
        const verdict = classifyAddress(colons((fromColons('64:ff9b:1::') | suffix)));
        expect(verdict).toMatchObject({ public: false, kind: 'nat64' });
        expect(verdict.public || verdict.embeds).toBeUndefined();
      }),
    );
  });
});

describe('the guard stays a leaf, and the only way out', () => {
  it('imports node built-ins, ipaddr.js and its own files only', () => {
    const folder = `${ROOT}lambdas/delivery/guard/`;
    const specifiers = readdirSync(folder).flatMap((file) => [...readFileSync(folder + file, 'utf8').matchAll(/\bfrom '([^']+)'/g)].map((m) => m[1]!));
    expect(specifiers.length).toBeGreaterThan(5);
    expect(specifiers.filter((s) => !/^node:|^ipaddr\.js$|^\.\/[a-z-]+\.js$/.test(s))).toEqual([]);
  });

  // ARCHITECTURE rule 13: whatever connects to an address someone else chose goes through the guard. The AWS SDK's
  // clients reach AWS's own endpoints; no other deployed file opens a socket or sends a request by itself.
  it('is the only folder under lambdas/ that opens a connection of its own (node:http, https, net, tls, dgram, http2, fetch)', () => {
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'lambdas/*.ts'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
    const opening = files.filter((file) => /from '(node:)?(http|https|net|tls|dgram|http2)'|\bfetch\(|\bnew WebSocket\(|from 'undici'/.test(readFileSync(ROOT + file, 'utf8')));
    expect(files.length).toBeGreaterThan(100);
    expect(opening).toContain('lambdas/delivery/guard/post.ts');
    expect(opening.filter((file) => !file.startsWith('lambdas/delivery/guard/'))).toEqual([]);
  });
});
