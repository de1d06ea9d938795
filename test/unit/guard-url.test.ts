/**
 * The outbound guard's URL checks (lambdas/delivery/guard/url-check.ts), with no network: checkUrlSyntax's rules one
 * by one (https, port 443, no credentials, at most 2,048 characters, a host name or literal address, no fragment),
 * every spelling of an IPv4 address the WHATWG URL parser accepts (decimal, octal, hexadecimal, short forms) judged
 * as the address it means, and checkUrl over an injected resolver: one refused address among any number refuses,
 * a failed or empty resolution refuses, and allowLoopback opens 127.0.0.1 and ::1 alone. Every refusal is a
 * sentence naming what is wrong.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { checkUrl, checkUrlSyntax, classifyAddress, describeAddress, type GuardPolicy, type Resolver } from '../../lambdas/delivery/guard/guard.js';

const STRICT: GuardPolicy = { allowLoopback: false };
const LOOPBACK: GuardPolicy = { allowLoopback: true };

const refusal = (raw: string, policy = STRICT) => {
  const check = checkUrlSyntax(raw, policy);
  return check.ok ? undefined : check.message;
};

/** A resolver that answers these addresses for every name, counting its calls. */
function answering(...addresses: string[]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = async (hostname: string) => {
    calls.push(hostname);
    return addresses.map((address) => ({ address, family: (address.includes(':') ? 6 : 4) as 4 | 6 }));
  };
  return Object.assign(resolver, { calls });
}

describe('checkUrlSyntax', () => {
  it('takes an https URL on port 443 with a host name or a public address', () => {
    for (const raw of ['https://hooks.example.com/', 'https://hooks.example.com:443/in?x=1', 'https://hooks.example.com:0443/', 'https://HOOKS.Example.COM./a/b', 'https://8.8.8.8/', 'https://[2606:4700::1111]/h', 'https://bücher.example/x']) {
      expect(checkUrlSyntax(raw, STRICT)).toMatchObject({ ok: true });
    }
    const check = checkUrlSyntax('https://HOOKS.Example.COM:443/in', STRICT);
    expect(check.ok && check.url.href).toBe('https://hooks.example.com/in');
  });

  it.each([
    ['http://hooks.example.com/', /must use https:\/\/ \(its scheme is http\)/],
    ['ftp://hooks.example.com/', /its scheme is ftp/],
    ['wss://hooks.example.com/', /its scheme is wss/],
    ['file:///etc/passwd', /its scheme is file/],
    ['gopher://127.0.0.1:6379/_INFO', /its scheme is gopher/],
    ['javascript:alert(1)', /its scheme is javascript/],
    ['data:text/plain,hi', /its scheme is data/],
  ])('refuses a scheme other than https: %s', (raw, message) => {
    expect(refusal(raw)).toMatch(message);
  });

  it.each(['8443', '80', '1', '65535', '444', '08443'])('refuses port %s', (port) => {
    expect(refusal(`https://hooks.example.com:${port}/`)).toMatch(new RegExp(`must use port 443 \\(it names port ${Number(port)}\\)`));
  });

  it.each(['https://user@hooks.example.com/', 'https://user:secret@hooks.example.com/', 'https://:secret@hooks.example.com/', 'https://a%40b:c@hooks.example.com/'])('refuses credentials: %s', (raw) => {
    expect(refusal(raw)).toBe('The URL must not contain a user name or password.');
  });

  it('takes 2,048 characters and refuses 2,049, as written and once normalised', () => {
    const base = 'https://hooks.example.com/';
    expect(checkUrlSyntax(base + 'a'.repeat(2048 - base.length), STRICT)).toMatchObject({ ok: true });
    expect(refusal(base + 'a'.repeat(2049 - base.length))).toBe('The URL is 2,049 characters long; at most 2,048 are allowed.');
    // 700 characters as written, each é percent-encoded into six once parsed.
    expect(refusal(base + 'é'.repeat(700))).toMatch(/^The URL is 4,226 characters long once normalised \(https:\/\/hooks\.example\.com\/%C3%A9/);
    expect(refusal('x'.repeat(100_000))).toMatch(/100,000 characters long/);
  });

  it.each(['https://hooks.example.com/#', 'https://hooks.example.com/#part', 'https://hooks.example.com/?q=1#x'])('refuses a fragment: %s', (raw) => {
    expect(refusal(raw)).toBe('The URL must not have a fragment (the part from #).');
  });

  it.each([' https://hooks.example.com/', 'https://hooks.example.com/ ', 'https://hooks.exa\tmple.com/', 'https://hooks.example.com/\n', 'https://hooks.example.com/a b', 'https://hooks.example.com/\u0000'])(
    'refuses spaces and control characters the parser would drop or encode: %j',
    (raw) => {
      expect(refusal(raw)).toBe('The URL must not contain spaces or control characters.');
    },
  );

  it.each(['hooks.example.com/path', '/hooks', '', 'https://', 'https://[::1/', 'https://hooks..example.com/', 'https://1.2.3.256/', 'https://[1:2:3]/'])('refuses what is not an absolute URL: %j', (raw) => {
    expect(refusal(raw)).toMatch(/^The URL( is not an absolute URL|'s host)/);
  });

  it.each([
    ['https://a!b.example/', 'a!b.example'],
    ['https://under$.example/', 'under$.example'],
    [`https://${'a'.repeat(64)}.example/`, `${'a'.repeat(64)}.example`],
    [`https://${Array(64).fill('abc').join('.')}/`, Array(64).fill('abc').join('.')],
  ])('refuses a host that is not a host name: %s', (raw, host) => {
    expect(refusal(raw)).toBe(`The URL's host ${host} is not a valid host name.`);
  });

  it.each([
    ['https://127.0.0.1/', '127.0.0.1, a loopback address'],
    ['https://10.1.2.3/', '10.1.2.3, a private address'],
    ['https://169.254.169.254/latest/meta-data/', "169.254.169.254, a cloud metadata service's address"],
    ['https://[fd00:ec2::254]/', "fd00:ec2::254, a cloud metadata service's address"],
    ['https://100.64.0.1/', '100.64.0.1, a shared (carrier-grade NAT) address'],
    ['https://224.0.0.1/', '224.0.0.1, a multicast address'],
    ['https://0.0.0.0/', '0.0.0.0, an unspecified ("this network") address'],
    ['https://[::]/', '::, an unspecified'],
    ['https://[::ffff:10.0.0.1]/', '::ffff:a00:1, an IPv4-mapped address carrying 10.0.0.1 (a private address)'],
    ['https://[::ffff:127.0.0.1]/', '::ffff:7f00:1, an IPv4-mapped address carrying 127.0.0.1 (a loopback address)'],
    ['https://[64:ff9b::169.254.169.254]/', "64:ff9b::a9fe:a9fe, a NAT64 address carrying 169.254.169.254 (a cloud metadata service's address)"],
    ['https://[64:ff9b:1::a00:1]/', '64:ff9b:1::a00:1, a NAT64 address'],
    ['https://[2002:7f00:1::]/', '2002:7f00:1::, a 6to4 address carrying 127.0.0.1 (a loopback address)'],
    ['https://[fe80::1]/', 'fe80::1, a link-local address'],
  ])('refuses a literal address that is not public: %s', (raw, phrase) => {
    expect(refusal(raw)).toContain(`The URL's host is ${phrase}`);
  });
});

/** Every spelling of a 32-bit number as an IPv4 host that the WHATWG URL parser reads as that address. */
const radix = fc.constantFrom<(n: number) => string>((n) => String(n), (n) => `0x${n.toString(16)}`, (n) => `0X${n.toString(16).toUpperCase()}`, (n) => `0${n.toString(8)}`);
const spelling = fc.tuple(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 1, max: 4 }), radix, radix, radix, radix).map(([n, parts, r0, r1, r2, r3]) => {
  const octet = (shift: number) => Math.floor(n / 2 ** shift) & 0xff;
  const text =
    parts === 1 ? r0(n)
    : parts === 2 ? `${r0(octet(24))}.${r1(n % 2 ** 24)}`
    : parts === 3 ? `${r0(octet(24))}.${r1(octet(16))}.${r2(n % 2 ** 16)}`
    : `${r0(octet(24))}.${r1(octet(16))}.${r2(octet(8))}.${r3(octet(0))}`;
  return { n, text, dotted: [24, 16, 8, 0].map(octet).join('.') };
});

describe('IPv4 spellings, as the WHATWG URL parser reads them', () => {
  it.each([
    ['https://2130706433/', '127.0.0.1'],
    ['https://0x7f.1/', '127.0.0.1'],
    ['https://017700000001/', '127.0.0.1'],
    ['https://127.1/', '127.0.0.1'],
    ['https://0x7f.0.0.1/', '127.0.0.1'],
    ['https://0300.0250.1.1/', '192.168.1.1'],
    ['https://0xa9fea9fe/', '169.254.169.254'],
    ['https://10.1/', '10.0.0.1'],
    ['https://0/', '0.0.0.0'],
  ])('%s is %s, and refused as it', (raw, address) => {
    expect(new URL(raw).hostname).toBe(address);
    expect(refusal(raw)).toContain(`The URL's host is ${address}, a`);
  });

  it('any spelling of any address is judged as the address it means', () => {
    fc.assert(
      fc.property(spelling, ({ text, dotted }) => {
        expect(new URL(`https://${text}/`).hostname).toBe(dotted);
        const check = checkUrlSyntax(`https://${text}/`, STRICT);
        expect(check.ok).toBe(classifyAddress(dotted).public);
        if (!check.ok) expect(check.message).toContain(`The URL's host is ${dotted}, `);
      }),
      { numRuns: 2000 },
    );
  });

  it('http://2130706433/ is refused twice over without the loopback setting, and is 127.0.0.1 with it', () => {
    expect(refusal('http://2130706433/')).toMatch(/https/);
    expect(checkUrlSyntax('http://2130706433:8080/', LOOPBACK)).toMatchObject({ ok: true });
    expect(refusal('http://0x7f.2:8080/', LOOPBACK)).toContain('127.0.0.2, a loopback address');
  });
});

describe('checkUrl: every address the host resolves to', () => {
  it('answers the URL and the checked addresses when all are public', async () => {
    const resolver = answering('93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c');
    const check = await checkUrl('https://hooks.example.com/in', STRICT, resolver);
    expect(check).toEqual({ ok: true, url: new URL('https://hooks.example.com/in'), addresses: ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] });
    expect(resolver.calls).toEqual(['hooks.example.com']);
  });

  it('refuses when any one of them is not public, wherever it stands among any number of public ones', async () => {
    const publicOnes = fc.constantFrom('93.184.215.14', '8.8.4.4', '2606:4700::1111', '2a00:1450:4001:80b::200e');
    const refusedOnes = fc.constantFrom('10.0.0.1', '127.0.0.1', '169.254.169.254', 'fd00:ec2::254', '100.64.0.1', '::ffff:10.0.0.1', '64:ff9b::a00:1', '::', '0.0.0.0', 'ff02::1', 'fe80::1', '::1', '198.18.0.1');
    await fc.assert(
      fc.asyncProperty(fc.array(publicOnes, { maxLength: 6 }), refusedOnes, fc.nat(), async (good, bad, at) => {
        const addresses: string[] = [...good];
        addresses.splice(at % (good.length + 1), 0, bad);
        const check = await checkUrl('https://hooks.example.com/', STRICT, answering(...addresses));
        expect(check).toEqual({ ok: false, message: `The URL's host hooks.example.com resolves to ${describeAddress(classifyAddress(bad))}: a webhook's host must resolve only to public addresses.` });
      }),
      { numRuns: 300 },
    );
  });

  it("refuses a host that does not resolve, naming the resolver's error, or resolves to nothing", async () => {
    const failing: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    expect(await checkUrl('https://nowhere.example/', STRICT, failing)).toEqual({ ok: false, message: "The URL's host nowhere.example cannot be reached: it does not resolve (ENOTFOUND)." });
    expect(await checkUrl('https://nowhere.example/', STRICT, async () => [])).toEqual({ ok: false, message: "The URL's host nowhere.example cannot be reached: it resolves to no address." });
    expect(await checkUrl('https://nowhere.example/', STRICT, () => Promise.reject('no'))).toMatchObject({ message: /it does not resolve\.$/ });
  });

  it('refuses a resolver answer that is not an address in the standard spelling', async () => {
    for (const answer of ['0x7f000001', '2130706433', 'localhost', '127.1', '']) {
      expect(await checkUrl('https://hooks.example.com/', STRICT, answering(answer))).toEqual({
        ok: false,
        message: `The URL's host hooks.example.com resolves to ${answer}, not an IP address: a webhook's host must resolve only to public addresses.`,
      });
    }
  });

  it('does not resolve a literal address, and refuses a bad URL before resolving', async () => {
    const resolver = answering('10.0.0.1');
    expect(await checkUrl('https://8.8.8.8/', STRICT, resolver)).toMatchObject({ ok: true, addresses: ['8.8.8.8'] });
    expect(await checkUrl('https://127.0.0.1/', STRICT, resolver)).toMatchObject({ ok: false });
    expect(await checkUrl('http://hooks.example.com/', STRICT, resolver)).toMatchObject({ ok: false, message: /https/ });
    expect(resolver.calls).toEqual([]);
  });
});

describe('allowLoopback: 127.0.0.1 and ::1 only, on any port, http or https', () => {
  it.each(['http://127.0.0.1:8080/hook', 'https://127.0.0.1:8443/hook', 'http://[::1]:3000/', 'http://127.0.0.1/', 'https://127.0.0.1/', 'http://2130706433:9000/'])('takes %s', async (raw) => {
    expect(await checkUrl(raw, LOOPBACK, answering())).toMatchObject({ ok: true });
  });

  it('takes a host name only when every address it resolves to is 127.0.0.1 or ::1', async () => {
    expect(await checkUrl('http://localhost:3000/', LOOPBACK, answering('127.0.0.1', '::1'))).toMatchObject({ ok: true, addresses: ['127.0.0.1', '::1'] });
    expect(await checkUrl('http://receiver.test:3000/', LOOPBACK, answering('127.0.0.1', '10.0.0.1'))).toMatchObject({ ok: false, message: /resolves to 10\.0\.0\.1, a private address/ });
    expect(await checkUrl('https://receiver.test/', LOOPBACK, answering('127.0.0.1', '8.8.8.8'))).toEqual({
      ok: false,
      message:
        "The URL's host receiver.test resolves to 127.0.0.1, a loopback address: a webhook's host must resolve only to public addresses (the local allow-loopback setting opens 127.0.0.1 and ::1 only to a host whose every address is one of them).",
    });
    expect(await checkUrl('http://hooks.example.com:3000/', LOOPBACK, answering('8.8.8.8'))).toEqual({
      ok: false,
      message: 'The URL must use https:// on port 443: plain http and other ports are only for a receiver at 127.0.0.1 or ::1 under the local allow-loopback setting.',
    });
    expect(await checkUrl('https://hooks.example.com/', LOOPBACK, answering('8.8.8.8'))).toMatchObject({ ok: true });
  });

  it.each([
    ['http://127.0.0.2:3000/', '127.0.0.2, a loopback address'],
    ['http://10.0.0.1:3000/', '10.0.0.1, a private address'],
    ['http://[::ffff:127.0.0.1]:3000/', '::ffff:7f00:1, an IPv4-mapped address carrying 127.0.0.1'],
    ['http://169.254.169.254/', "169.254.169.254, a cloud metadata service's address"],
    ['http://[fe80::1]:3000/', 'fe80::1, a link-local address'],
    ['http://0.0.0.0:3000/', '0.0.0.0, an unspecified'],
  ])('still refuses every other address that is not public: %s', async (raw, phrase) => {
    expect(await checkUrl(raw, LOOPBACK, answering())).toMatchObject({ ok: false, message: expect.stringContaining(phrase) });
  });

  it('is off unless set: loopback refused like any private address', async () => {
    expect(refusal('http://127.0.0.1:8080/')).toMatch(/its scheme is http/);
    expect(refusal('https://127.0.0.1:8443/')).toMatch(/port 443/);
    expect(refusal('https://127.0.0.1/')).toContain('127.0.0.1, a loopback address');
    expect(refusal('https://[::1]/')).toContain('::1, a loopback address');
    expect(await checkUrl('https://localhost/', STRICT, answering('127.0.0.1', '::1'))).toMatchObject({ ok: false, message: /resolves to 127\.0\.0\.1, a loopback address/ });
  });
});
