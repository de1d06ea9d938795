/**
 * The outbound guard's POST (lambdas/delivery/guard/post.ts) against real receivers on this machine's loopback
 * (test/support/receivers.ts): what it sends (the body and the request's own headers, nothing else), what it makes
 * of every kind of answer (any status, redirects never followed, bodies and heads over the bound, answers that drip,
 * stall, break off or are not HTTP), and of receivers that never answer or never accept. Deadlines that must fire
 * are the guard's own, injected at 200 ms; nothing here waits for time to pass but the guard's deadline.
 */
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { Poster } from '../../lambdas/delivery/outbound.js';
import { DEFAULT_MAX_ANSWER_BYTES, checkUrl, guardedPost, type GuardPolicy, type PostOutcome, type Resolver } from '../../lambdas/delivery/guard/guard.js';
import type { UrlChecker } from '../../lambdas/key-admin/webhook-manager.js';
import { closeReceivers, closedPort, httpReceiver, neverAccepting, rawReceiver } from '../support/receivers.js';

const LOOPBACK: GuardPolicy = { allowLoopback: true };
const STRICT: GuardPolicy = { allowLoopback: false };
/** The deadline of the tests whose receiver never finishes: the guard's own, injected. */
const SHORT = { timeoutMs: 200 };

const post = (url: string, opts = {}, headers: Record<string, string> = {}, body = '{}') => guardedPost({ url, body, headers }, LOOPBACK, opts);
const answered = (status: number): PostOutcome => ({ kind: 'answered', status });
const failed = (errorClass: string) => ({ kind: 'failed', errorClass });

afterEach(closeReceivers);

describe('the last look before the send (beforeSend)', () => {
  it('is asked once the connection is made; a no, a failure to say or no answer within the deadline writes nothing', async () => {
    const receiver = await httpReceiver();
    const asked: string[] = [];
    const look = (answer: () => Promise<boolean>) => guardedPost({ url: `${receiver.origin}/`, body: '{}', headers: {}, beforeSend: () => (asked.push('asked'), answer()) }, LOOPBACK, SHORT);
    expect(await look(async () => false)).toEqual({ kind: 'withdrawn' });
    expect(await look(async () => Promise.reject(new Error('the table did not answer')))).toEqual({ kind: 'withdrawn' });
    expect(await look(() => new Promise<boolean>(() => {}))).toEqual(failed('timeout'));
    expect(asked).toHaveLength(3);
    // Connected each time, and not one byte of a request written.
    expect({ connections: receiver.connections.length, received: receiver.received }).toEqual({ connections: 3, received: [] });
    expect(await look(async () => true)).toEqual(answered(204));
    expect(receiver.received.map((r) => r.body)).toEqual(['{}']);
  });

  it('is never asked when no connection is made', async () => {
    const asked: string[] = [];
    const port = await closedPort();
    expect(await guardedPost({ url: `http://127.0.0.1:${port}/`, body: '{}', headers: {}, beforeSend: async () => (asked.push('asked'), true) }, LOOPBACK, SHORT)).toEqual(failed('connect'));
    expect(asked).toEqual([]);
  });
});

describe('what the guard sends', () => {
  it("POSTs the body to the URL's path and query with the request's own headers and no others", async () => {
    const receiver = await httpReceiver((_req, res) => res.writeHead(200).end('ok'));
    const body = JSON.stringify({ webhook_id: 'wh_1', changes: [{ id: 'e1', change: 'removed' }], note: 'é€😀' });
    const headers = { 'content-type': 'application/json', 'webhook-id': 'msg_1', 'webhook-signature': 'v1,abc=' };
    expect(await post(`${receiver.origin}/hooks/in?x=1&y=%20`, {}, headers, body)).toEqual(answered(200));
    expect(receiver.received).toEqual([
      {
        method: 'POST',
        url: '/hooks/in?x=1&y=%20',
        body,
        servername: undefined,
        headers: [
          ['content-type', 'application/json'],
          ['webhook-id', 'msg_1'],
          ['webhook-signature', 'v1,abc='],
          ['host', `127.0.0.1:${receiver.port}`],
          ['content-length', String(Buffer.byteLength(body))],
          ['connection', 'close'],
        ],
      },
    ]);
  });

  it('writes Host and Content-Length itself, and drops the hop-by-hop headers a request brings', async () => {
    const receiver = await httpReceiver();
    const headers = { Host: 'internal.example', 'Content-Length': '1', Connection: 'keep-alive', Expect: '100-continue', 'Transfer-Encoding': 'chunked', Upgrade: 'h2c', TE: 'trailers', 'x-kept': 'yes' };
    expect(await post(`${receiver.origin}/`, {}, headers, 'hello')).toEqual(answered(204));
    expect(receiver.received[0]!.headers).toEqual([
      ['x-kept', 'yes'],
      ['host', `127.0.0.1:${receiver.port}`],
      ['content-length', '5'],
      ['connection', 'close'],
    ]);
    expect(receiver.received[0]!.body).toBe('hello');
  });

  it("never throws: a header node will not send is a failed attempt, and nothing is sent", async () => {
    const receiver = await httpReceiver();
    expect(await post(`${receiver.origin}/`, {}, { 'bad name': 'x' })).toEqual(failed('protocol'));
    expect(await post(`${receiver.origin}/`, {}, { 'x-split': 'a\r\nx-injected: 1' })).toEqual(failed('protocol'));
    expect(receiver.connections).toHaveLength(0);
  });
});

describe('the seams the webhooks code calls it through', () => {
  it("fits the delivery's send (Poster) and the management API's URL check (UrlChecker) as they are", async () => {
    const receiver = await httpReceiver();
    const send: Poster = (req) => guardedPost(req, LOOPBACK);
    const check: UrlChecker = (raw) => checkUrl(raw, LOOPBACK);
    expect(await send({ url: `${receiver.origin}/`, body: '{}', headers: {} })).toEqual(answered(204));
    expect(await check(`${receiver.origin}/`)).toMatchObject({ ok: true });
    expect(await check('https://10.0.0.1/')).toEqual({ ok: false, message: "The URL's host is 10.0.0.1, a private address: a webhook must reach a public address." });
  });
});

describe('what it makes of an answer', () => {
  it('answers any status as the receiver gave it', async () => {
    const receiver = await httpReceiver((req, res) => res.writeHead(Number(req.url!.slice(1))).end('body'));
    for (const status of [200, 201, 202, 204, 299, 400, 401, 404, 410, 413, 429, 500, 502, 503, 599]) expect(await post(`${receiver.origin}/${status}`)).toEqual(answered(status));
  });

  it.each([301, 302, 303, 307, 308])('never follows a %i: it is the answer, and its Location gets nothing', async (status) => {
    const target = await httpReceiver();
    const receiver = await httpReceiver((_req, res) => res.writeHead(status, { location: `${target.origin}/elsewhere` }).end());
    expect(await post(`${receiver.origin}/hook`)).toEqual(answered(status));
    expect(receiver.received).toHaveLength(1);
    expect(target.connections).toHaveLength(0);
  });

  it('takes an answer with a body of any size, reading no more of it than maxAnswerBytes (with and without a length)', async () => {
    const receiver = await httpReceiver((req, res) => {
      const size = Number(req.url!.split('/')[2]);
      if (req.url!.startsWith('/chunked/')) res.writeHead(200).end('x'.repeat(size));
      else res.writeHead(200, { 'content-length': size }).end('x'.repeat(size));
    });
    for (const kind of ['length', 'chunked']) {
      for (const size of [0, 1, 1024, 1025, DEFAULT_MAX_ANSWER_BYTES + 1, 4 * 1024 * 1024]) {
        expect([kind, size, await post(`${receiver.origin}/${kind}/${size}`, { maxAnswerBytes: 1024 })]).toEqual([kind, size, answered(200)]);
      }
    }
  });

  it.each([
    ['the bound given', 1024, { maxAnswerBytes: 1024 }],
    ['the default 64 KiB', DEFAULT_MAX_ANSWER_BYTES, {}],
  ])('stops reading at %s: an answer that stalls there is taken, one that stalls a byte short times out', async (_name, bound, opts) => {
    const stalling = await rawReceiver((socket) =>
      socket.once('data', (request) => {
        const size = Number(/^POST \/(\d+)/.exec(request.toString('latin1'))![1]);
        socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 1073741824\r\n\r\n${'x'.repeat(size)}`);
      }),
    );
    // No deadline to speak of: only stopping at the bound answers this one (else jest's own timeout fails it).
    expect(await post(`${stalling.origin}/${bound}`, { ...opts, timeoutMs: 600_000 })).toEqual(answered(200));
    expect(await post(`${stalling.origin}/${bound - 1}`, { ...opts, ...SHORT })).toEqual(failed('timeout'));
    await Promise.all(stalling.connections.map(closed));
  });

  it('cuts an endless answer off at the bound, long before its deadline, and closes the connection', async () => {
    let written = 0;
    const receiver = await rawReceiver((socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1073741824\r\n\r\n');
      const more = () => {
        while (!socket.destroyed && socket.write(Buffer.alloc(16_384, 120))) written += 16_384;
        if (!socket.destroyed) socket.once('drain', more);
      };
      more();
    });
    expect(await post(`${receiver.origin}/`, { timeoutMs: 600_000 })).toEqual(answered(200));
    await closed(receiver.connections[0]!);
    // What the receiver managed to write before the guard hung up: the bound, and what the kernel's buffers held.
    expect(written).toBeLessThan(16 * 1024 * 1024);
  });

  it("takes a head of node's 16 KiB, and a larger one is too large", async () => {
    const receiver = await httpReceiver((req, res) => res.writeHead(200, { 'x-pad': 'p'.repeat(Number(req.url!.slice(1))) }).end());
    expect(await post(`${receiver.origin}/15000`)).toEqual(answered(200));
    expect(await post(`${receiver.origin}/20000`)).toEqual(failed('too_large'));
  });

  it.each([
    ['a head dripped a byte at a time', 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'.repeat(50), ''],
    ['a body dripped a byte at a time', 'x'.repeat(500), 'HTTP/1.1 200 OK\r\ncontent-length: 500\r\n\r\n'],
  ])('times out on %s, bytes arriving all along (one deadline for the whole answer, not an idle timeout)', async (_name, drip, head) => {
    let sent = 0;
    const receiver = await rawReceiver((socket) => {
      socket.once('data', () => {
        socket.write(head);
        // The adversary's pace: a byte every 20 ms, ten times inside the guard's 200 ms deadline.
        const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write(drip[sent++ % drip.length]!)), 20);
        socket.once('close', () => clearInterval(timer));
      });
    });
    expect(await post(`${receiver.origin}/`, SHORT)).toEqual(failed('timeout'));
    await closed(receiver.connections[0]!);
  });

  it('times out on a receiver that accepts and never answers, and one that reads the request and never answers', async () => {
    const silent = await rawReceiver(() => {});
    expect(await post(`${silent.origin}/`, SHORT)).toEqual(failed('timeout'));
    const reading = await httpReceiver(() => {});
    expect(await post(`${reading.origin}/`, SHORT)).toEqual(failed('timeout'));
    expect(reading.received).toHaveLength(1);
    await Promise.all([closed(silent.connections[0]!), closed(reading.connections[0]!)]);
  });

  it('times out on a receiver that never accepts the connection', async () => {
    const listener = await neverAccepting();
    expect(await post(`http://127.0.0.1:${listener.port}/`, SHORT)).toEqual(failed('timeout'));
    // It was not accepting all along: a connection opened before the guard's is still waiting.
    expect(listener.stillConnecting()).toBe(true);
  });

  it('fails to connect where nothing listens', async () => {
    expect(await post(`http://127.0.0.1:${await closedPort()}/`)).toEqual(failed('connect'));
  });

  it.each([
    ['closes the connection without a word', (socket: Socket) => socket.once('data', () => socket.destroy())],
    ['answers something that is not HTTP', (socket: Socket) => socket.once('data', () => socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n'))],
    ['breaks off its body short of its length and of the bound', (socket: Socket) => socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly ten..'))],
    ['switches protocols unasked', (socket: Socket) => socket.once('data', () => socket.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n'))],
    ['answers a status line out of range', (socket: Socket) => socket.once('data', () => socket.end('HTTP/1.1 2000 OK\r\n\r\n'))],
  ])('fails on a receiver that %s (a protocol failure, never a crash)', async (_name, onSocket) => {
    const receiver = await rawReceiver(onSocket);
    expect(await post(`${receiver.origin}/`)).toEqual(failed('protocol'));
  });
});

describe('resolution at delivery', () => {
  it("times out on a resolver that never answers, within the guard's deadline", async () => {
    const hanging: Resolver = () => new Promise(() => {});
    expect(await guardedPost({ url: 'https://hooks.example.com/', body: '', headers: {} }, STRICT, { ...SHORT, resolver: hanging })).toEqual(failed('timeout'));
  });

  it("has P18's 10 s deadline by default (fake timers: 9,999 ms pending, 10,000 ms a timeout)", async () => {
    jest.useFakeTimers();
    try {
      let outcome: PostOutcome | undefined;
      void guardedPost({ url: 'https://hooks.example.com/', body: '', headers: {} }, STRICT, { resolver: () => new Promise(() => {}) }).then((o) => (outcome = o));
      await jest.advanceTimersByTimeAsync(9_999);
      expect(outcome).toBeUndefined();
      await jest.advanceTimersByTimeAsync(1);
      expect(outcome).toEqual(failed('timeout'));
    } finally {
      jest.useRealTimers();
    }
  });

  it('fails as dns when the host does not resolve, or resolves to nothing', async () => {
    const failing: Resolver = () => Promise.reject(Object.assign(new Error('queryA ENOTFOUND'), { code: 'ENOTFOUND' }));
    expect(await guardedPost({ url: 'https://hooks.example.com/', body: '', headers: {} }, STRICT, { resolver: failing })).toEqual(failed('dns'));
    expect(await guardedPost({ url: 'https://hooks.example.com/', body: '', headers: {} }, STRICT, { resolver: async () => [] })).toEqual(failed('dns'));
  });

  it('refuses a URL that fails its checks, before any resolution or connection', async () => {
    const receiver = await httpReceiver();
    let resolved = 0;
    const resolver: Resolver = async () => (resolved++, [{ address: '127.0.0.1', family: 4 }]);
    for (const url of ['ftp://hooks.example.com/', 'https://user:pw@hooks.example.com/', `https://hooks.example.com/${'a'.repeat(2048)}`, 'https://hooks.example.com/#f', 'not a url']) {
      expect(await guardedPost({ url, body: '', headers: {} }, STRICT, { resolver })).toEqual({ kind: 'refused', errorClass: 'url' });
    }
    expect(await guardedPost({ url: `${receiver.origin}/`, body: '', headers: {} }, STRICT, { resolver })).toEqual({ kind: 'refused', errorClass: 'url' });
    expect(await guardedPost({ url: 'https://10.0.0.1/', body: '', headers: {} }, STRICT, { resolver })).toEqual({ kind: 'refused', errorClass: 'address' });
    expect([resolved, receiver.connections.length]).toEqual([0, 0]);
  });
});

/** Resolves once the receiver's side of the connection is closed (the guard hung up). */
function closed(socket: Socket): Promise<void> {
  if (socket.destroyed) return Promise.resolve();
  const done = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  // A socket nobody reads never sees the other side's end: read (and drop) until it does.
  socket.resume();
  return done;
}
