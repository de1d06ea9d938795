/**
 * Where the outbound guard connects (lambdas/delivery/guard/post.ts), with real sockets on this machine's loopback:
 * to the address it checked and no other (DNS rebinding between the check and the connect, and between the
 * management API's check and a delivery), never while any address of the host is refused, to loopback only under
 * allowLoopback, over TLS with the URL's host as SNI and Host and every certificate failure a `tls` failure, and never
 * through a proxy named in the environment. 127.0.0.2 plays the attacker's address: Linux routes all of 127/8 to lo.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { checkUrl, guardedPost, type GuardPolicy, type Resolver } from '../../lambdas/delivery/guard/guard.js';
import { connectedToChecked } from '../../lambdas/delivery/guard/post.js';
import { TLS, closeReceivers, httpReceiver, httpsReceiver, rawReceiver, type Receiver } from '../support/receivers.js';

const LOOPBACK: GuardPolicy = { allowLoopback: true };
const STRICT: GuardPolicy = { allowLoopback: false };

/** A resolver whose n-th call answers the n-th list (the last one after that), counting its calls. */
function rebinding(...answers: string[][]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = async (hostname: string) => {
    calls.push(hostname);
    const addresses = answers[Math.min(calls.length, answers.length) - 1]!;
    return addresses.map((address) => ({ address, family: (address.includes(':') ? 6 : 4) as 4 | 6 }));
  };
  return Object.assign(resolver, { calls });
}

/** A receiver on 127.0.0.1 and an attacker's listener on 127.0.0.2 at the same port (so the URL fits both). */
async function receiverAndAttacker(make: typeof httpReceiver): Promise<[Receiver, Receiver]> {
  for (;;) {
    const receiver = await make();
    try {
      return [receiver, await make(undefined, { host: '127.0.0.2', port: receiver.port })];
    } catch {
      // That port was taken on 127.0.0.2: another pair.
    }
  }
}

const post = (url: string, policy: GuardPolicy, resolver?: Resolver, ca?: Buffer) => guardedPost({ url, body: '{}', headers: { 'content-type': 'application/json' } }, policy, { resolver, ca });

afterEach(closeReceivers);

describe('DNS rebinding', () => {
  const schemes: [string, typeof httpReceiver, Buffer | undefined][] = [
    ['http', httpReceiver, undefined],
    ['https', httpsReceiver, TLS.ca],
  ];
  it.each(schemes)('between the check and the connect (%s): the connection goes to the checked address, the resolver asked once', async (scheme, make, ca) => {
    const [receiver, attacker] = await receiverAndAttacker(make);
    const resolver = rebinding(['127.0.0.1'], ['127.0.0.2']);
    expect(await post(`${scheme}://receiver.test:${receiver.port}/hook`, LOOPBACK, resolver, ca)).toEqual({ kind: 'answered', status: 204 });
    expect(resolver.calls).toEqual(['receiver.test']);
    expect(receiver.received).toHaveLength(1);
    expect(attacker.connections).toHaveLength(0);
  });

  it("between the management API's check and a delivery: public at create, private at delivery, refused before connecting", async () => {
    const resolver = rebinding(['93.184.215.14'], ['10.0.0.1']);
    expect(await checkUrl('https://hooks.example.com/in', STRICT, resolver)).toMatchObject({ ok: true, addresses: ['93.184.215.14'] });
    expect(await post('https://hooks.example.com/in', STRICT, resolver)).toEqual({ kind: 'refused', errorClass: 'address' });
    expect(resolver.calls).toEqual(['hooks.example.com', 'hooks.example.com']);
  });

  it('a host that moved from a loopback receiver to another address between deliveries is refused, and the receiver gets nothing more', async () => {
    const receiver = await httpReceiver();
    const resolver = rebinding(['127.0.0.1'], ['10.0.0.1'], ['127.0.0.1', '169.254.169.254']);
    const url = `http://receiver.test:${receiver.port}/`;
    expect(await post(url, LOOPBACK, resolver)).toEqual({ kind: 'answered', status: 204 });
    expect(await post(url, LOOPBACK, resolver)).toEqual({ kind: 'refused', errorClass: 'address' });
    expect(await post(url, LOOPBACK, resolver)).toEqual({ kind: 'refused', errorClass: 'address' });
    expect(receiver.connections).toHaveLength(1);
  });
});

describe('which addresses it connects to', () => {
  it('refuses when any one address of the host is refused, connecting to none of them', async () => {
    const receiver = await httpReceiver();
    for (const bad of ['10.0.0.1', '127.0.0.2', '::ffff:127.0.0.1', 'fd00:ec2::254', '0.0.0.0']) {
      for (const addresses of [['127.0.0.1', bad], [bad, '127.0.0.1']]) {
        expect(await post(`http://receiver.test:${receiver.port}/`, LOOPBACK, rebinding(addresses))).toEqual({ kind: 'refused', errorClass: 'address' });
      }
    }
    expect(receiver.connections).toHaveLength(0);
  });

  it('reaches 127.0.0.1 and ::1 under allowLoopback, as literals and through a name', async () => {
    const v4 = await httpReceiver();
    const v6 = await httpReceiver(undefined, { host: '::1' });
    expect(await post(`${v4.origin}/`, LOOPBACK)).toEqual({ kind: 'answered', status: 204 });
    expect(await post(`${v6.origin}/`, LOOPBACK)).toEqual({ kind: 'answered', status: 204 });
    expect(await post(`http://receiver.test:${v6.port}/`, LOOPBACK, rebinding(['::1']))).toEqual({ kind: 'answered', status: 204 });
    expect(v6.received.map((r) => r.headers.find(([name]) => name === 'host')![1])).toEqual([`[::1]:${v6.port}`, `receiver.test:${v6.port}`]);
  });

  it('refuses loopback without allowLoopback, and any other loopback address with it, connecting to nothing', async () => {
    const [receiver, attacker] = await receiverAndAttacker(httpReceiver);
    expect(await post(`${receiver.origin}/`, STRICT)).toEqual({ kind: 'refused', errorClass: 'url' });
    expect(await post(`https://receiver.test/`, STRICT, rebinding(['127.0.0.1']))).toEqual({ kind: 'refused', errorClass: 'address' });
    expect(await post(`https://127.0.0.1/`, STRICT)).toEqual({ kind: 'refused', errorClass: 'address' });
    expect(await post(`${attacker.origin}/`, LOOPBACK)).toEqual({ kind: 'refused', errorClass: 'address' });
    expect(await post(`http://receiver.test:${receiver.port}/`, LOOPBACK, rebinding(['127.0.0.2']))).toEqual({ kind: 'refused', errorClass: 'address' });
    expect([receiver.connections.length, attacker.connections.length]).toEqual([0, 0]);
  });

  it("holds a connected socket's peer to the checked addresses, in one normal form", () => {
    const checked = new Set(['127.0.0.1', '::1', '2606:4700::1111']);
    expect(connectedToChecked('127.0.0.1', checked)).toBe(true);
    expect(connectedToChecked('0:0:0:0:0:0:0:1', checked)).toBe(true);
    expect(connectedToChecked('2606:4700:0:0:0:0:0:1111', checked)).toBe(true);
    expect(connectedToChecked('127.0.0.2', checked)).toBe(false);
    expect(connectedToChecked('::ffff:127.0.0.1', checked)).toBe(false);
    expect(connectedToChecked(undefined, checked)).toBe(false);
  });
});

describe('TLS', () => {
  it("sends the URL's host as SNI and Host, and verifies the certificate against it", async () => {
    const receiver = await httpsReceiver();
    expect(await post(`https://receiver.test:${receiver.port}/in`, LOOPBACK, rebinding(['127.0.0.1']), TLS.ca)).toEqual({ kind: 'answered', status: 204 });
    expect(receiver.received[0]).toMatchObject({ servername: 'receiver.test', headers: expect.arrayContaining([['host', `receiver.test:${receiver.port}`]]) });
  });

  it('asks the last look once the handshake is done, and writes nothing over TLS when it says no', async () => {
    const receiver = await httpsReceiver();
    const url = `https://receiver.test:${receiver.port}/in`;
    const asked: string[] = [];
    const look = (ok: boolean) => guardedPost({ url, body: '{}', headers: {}, beforeSend: async () => (asked.push(ok ? 'yes' : 'no'), ok) }, LOOPBACK, { resolver: rebinding(['127.0.0.1']), ca: TLS.ca });
    expect(await look(false)).toEqual({ kind: 'withdrawn' });
    expect(receiver.received).toEqual([]);
    expect(await look(true)).toEqual({ kind: 'answered', status: 204 });
    expect({ asked, received: receiver.received.length }).toEqual({ asked: ['no', 'yes'], received: 1 });
    // A certificate that fails is a tls failure before any look.
    expect(await guardedPost({ url, body: '{}', headers: {}, beforeSend: async () => (asked.push('untrusted'), true) }, LOOPBACK, { resolver: rebinding(['127.0.0.1']) })).toEqual({ kind: 'failed', errorClass: 'tls' });
    expect(asked).toEqual(['no', 'yes']);
  });

  it('sends no SNI to a literal address, and verifies the certificate against the address', async () => {
    const receiver = await httpsReceiver();
    expect(await post(`${receiver.origin}/in`, LOOPBACK, undefined, TLS.ca)).toEqual({ kind: 'answered', status: 204 });
    expect(receiver.received[0]!.servername).toBe(false);
  });

  it.each([
    ['a certificate from a CA it does not trust', { host: 'receiver.test', ca: undefined, expired: false }],
    ['a certificate for another name', { host: 'wrong.test', ca: TLS.ca, expired: false }],
    ['an expired certificate', { host: 'receiver.test', ca: TLS.ca, expired: true }],
  ])('fails as tls on %s, sending nothing', async (_name, { host, ca, expired }) => {
    const receiver = await httpsReceiver(undefined, { expired });
    expect(await post(`https://${host}:${receiver.port}/`, LOOPBACK, rebinding(['127.0.0.1']), ca)).toEqual({ kind: 'failed', errorClass: 'tls' });
    expect(receiver.received).toHaveLength(0);
  });

  it('fails as tls on a plain HTTP server, and on one that hangs up during the handshake', async () => {
    const plain = await httpReceiver();
    expect(await post(`https://127.0.0.1:${plain.port}/`, LOOPBACK, undefined, TLS.ca)).toEqual({ kind: 'failed', errorClass: 'tls' });
    const hangsUp = await rawReceiver((socket) => socket.once('data', () => socket.destroy()));
    expect(await post(`https://127.0.0.1:${hangsUp.port}/`, LOOPBACK, undefined, TLS.ca)).toEqual({ kind: 'failed', errorClass: 'tls' });
    expect(plain.received).toHaveLength(0);
  });
});

describe('the system resolver', () => {
  it("resolves through getaddrinfo (localhost: from /etc/hosts, no DNS query) and the guard reaches the receiver through its answer", async () => {
    const receiver = await httpReceiver();
    const check = await checkUrl(`http://localhost:${receiver.port}/`, LOOPBACK);
    expect(check).toMatchObject({ ok: true, addresses: expect.arrayContaining(['127.0.0.1']) });
    expect(check.ok && check.addresses.filter((a) => a !== '127.0.0.1' && a !== '::1')).toEqual([]);
    expect(await post(`http://localhost:${receiver.port}/`, LOOPBACK)).toEqual({ kind: 'answered', status: 204 });
    expect(await checkUrl('https://localhost/', STRICT)).toMatchObject({ ok: false, message: expect.stringContaining('resolves to') });
  });
});

describe('the environment', () => {
  const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy', 'NO_PROXY', 'no_proxy', 'NODE_USE_ENV_PROXY'];

  it('takes no proxy from it: HTTP(S)_PROXY and the rest are never used, the receiver is reached directly', async () => {
    const proxy = await rawReceiver((socket) => socket.end('HTTP/1.1 200 Connection established\r\n\r\n'));
    const saved = Object.fromEntries(PROXY_VARIABLES.map((name) => [name, process.env[name]]));
    try {
      for (const name of PROXY_VARIABLES) process.env[name] = /no_proxy/i.test(name) ? '' : name === 'NODE_USE_ENV_PROXY' ? '1' : `http://127.0.0.1:${proxy.port}`;
      const http = await httpReceiver();
      const https = await httpsReceiver();
      expect(await post(`http://receiver.test:${http.port}/`, LOOPBACK, rebinding(['127.0.0.1']))).toEqual({ kind: 'answered', status: 204 });
      expect(await post(`https://receiver.test:${https.port}/`, LOOPBACK, rebinding(['127.0.0.1']), TLS.ca)).toEqual({ kind: 'answered', status: 204 });
      expect([http.received.length, https.received.length, proxy.connections.length]).toEqual([1, 1, 0]);
    } finally {
      for (const [name, value] of Object.entries(saved)) if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
});
