/**
 * Regression tests, one per class of hostile input that once got a 500, a
 * bare status line, a reset or no answer at all from the local server. The
 * fuzz tests (fuzz-http, fuzz-handlers) look for new ones.
 *
 * In jest's rehearsal project the same requests go to the synthesized stack
 * (test/support/target.ts): the template's REST APIs, gateway responses and
 * the bundles from cdk.out, each call to DynamoDB checked against its role.
 * The rule holds there too. What tests only the local server's own features
 * (its HTTP parser's refusals, CONNECT, its /docs pages and images, its
 * start-up) runs on the local server only: AWS has none of them (below).
 */
import { inflateSync } from 'node:zlib';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { routes, resourcePath } from '../../lambdas/routes.js';
import { deferred, servingWhenReady, type RequestListener } from '../../local/http-server.js';
import { KEYS } from '../support/fixtures.js';
import { assertMatchesDocument } from '../support/contract.js';
import { expectationsFor, privateStrings, send as sendTo, sendRaw as sendRawTo, surfaceOf, violations, type Answer } from '../support/hostile.js';
import { TARGET, startTarget, type Target } from '../support/target.js';

let server: Target;
const secrets = privateStrings();
const key = ['x-events-api-key', KEYS.both] as const;

beforeAll(async () => {
  server = await startTarget();
});
afterAll(async () => server?.close());

/**
 * Where a raw target goes: the local server's one port, or on the rehearsal
 * the REST API of the target's surface (in AWS each API has its own host;
 * a target of neither surface goes to the Public API's).
 */
const originOf = (target: string) => new URL(surfaceOf(target) === 'embed' ? server.embedBaseUrl : server.publicBaseUrl).origin;
const portOf = (target: string) => Number(new URL(originOf(target)).port);
const send = (req: Parameters<typeof sendTo>[1]) => sendTo(portOf(req.target), req);
const sendRaw = (target: string, bytes: string | Buffer) => sendRawTo(portOf(target), bytes);

/**
 * On the rehearsal, the DynamoDB calls the route functions made while
 * `requests` ran (the authorizer's excepted: it reads the key before any route
 * validates anything). Locally: null, the sources run in-process, unrecorded.
 */
async function routeStoreCalls(requests: () => Promise<void>): Promise<string[] | null> {
  const rehearsal = server.rehearsal;
  if (!rehearsal) {
    await requests();
    return null;
  }
  type Node = (typeof rehearsal.apis)[number]['rest']['root'];
  const authorizers = new Set<string>();
  const walk = (n: Node): void => {
    for (const m of n.methods.values()) if (m.authorizer) authorizers.add(m.authorizer.fn);
    n.children.forEach(walk);
  };
  rehearsal.apis.forEach((a) => walk(a.rest.root));
  const before = rehearsal.endpoint.calls.length;
  await requests();
  return rehearsal.endpoint.calls.slice(before).filter((c) => !authorizers.has(c.fn)).map((c) => `${c.fn} ${c.action} ${c.resource}`);
}

/**
 * What the old prefix's 308 puts before /api/public/v1: nothing locally; on
 * the rehearsal, whose URL stands for the stage's execute-api URL
 * (`https://{api}.execute-api.{region}.amazonaws.com/{stage}`) and whose port
 * for that host (a path may begin with the stage), the stage, as in AWS: the
 * function builds the Location from requestContext.path, which there
 * includes the stage (the `$context.path` variable,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-mapping-template-reference.html#context-variable-reference;
 * on the custom domain it has none, test/rehearsal/stages.test.ts).
 */
const stagePrefix = () => (server.rehearsal ? `/${server.rehearsal.apis[0]!.rest.stageName}` : '');

/**
 * The invariants (test/support/hostile.ts: the envelope, or exactly what
 * PRODUCT P15 answers instead), the status, and, for a target on
 * either API in origin form, the surface's OpenAPI document (its 414 and 431
 * are API Gateway's size limits, documented on every operation).
 */
async function expectEnvelope(answer: Answer, target: string, status: number, head = false, method = head ? 'HEAD' : 'GET') {
  expect(violations(answer, { ...expectationsFor(method, target), bodyExpected: !head, secrets })).toEqual([]);
  expect(answer.status).toBe(status);
  if (!head && target.startsWith('/api/')) {
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined) headers.set(name, [value].flat().join(', '));
    await assertMatchesDocument({ method, url: `${originOf(target)}${target}`, status: answer.status, headers, text: answer.body });
  }
}

describe('query parameter names that are Object.prototype members', () => {
  const names = '__proto__=1&constructor=1&toString=1&valueOf=x&hasOwnProperty=1&isPrototypeOf=1';
  const filled = (path: string) => path.replace('{eventId}', 'evt_jazz01').replace('{username}', 'alice');

  // Ignored, as every unknown parameter is on every route (PRODUCT P6). A route that takes a place is asked with one.
  it.each(routes.map((r) => [r.id, filled(resourcePath(r)), 'takesPlace' in r] as const))('are ordinary parameters on %s: ignored like any unknown one', async (_id, path, takesPlace) => {
    const target = `${path}?${takesPlace ? 'city=Amsterdam&' : ''}${names}`;
    const answer = await send({ method: 'GET', target, headers: [key] });
    await expectEnvelope(answer, target, 200);
  });

  it('are ordinary header names too', async () => {
    const target = '/api/public/v1/events/evt_jazz01';
    const headers = [['__proto__', '1'], ['constructor', '2'], ['toString', '3'], key] as const;
    await expectEnvelope(await send({ method: 'GET', target, headers }), target, 200);
  });

  it('as repeated and array-style names, the last value counts, as in API Gateway', async () => {
    const target = '/api/embed/v1/users/alice/events?limit=1&limit=2&limit[]=3&__proto__=a&__proto__=b';
    const answer = await send({ method: 'GET', target, headers: [] });
    await expectEnvelope(answer, target, 200);
    expect((JSON.parse(answer.body) as { data: unknown[] }).data).toHaveLength(2);
  });
});

describe('request targets in absolute or authority form, and doubled slashes', () => {
  it.each([
    ['//127.0.0.1:99999/api/embed/v1/events/evt_jazz01', 404],
    ['//other/api/public/v1/events/evt_jazz01', 404],
    ['/api/embed/v1//events/evt_jazz01', 404],
    ['/api/public/v1/events//evt_jazz01', 404],
    ['/api/embed/v1/users/../events/evt_jazz01', 404],
    ['http://other/api/embed/v1/events/evt_jazz01', 200],
    ['http://127.0.0.1:99999/api/public/v1/events/evt_jazz01', 200],
    ['https://x.example', 404],
  ])('GET %s → %i with the envelope', async (target, status) => {
    await expectEnvelope(await send({ method: 'GET', target, headers: [key] }), target, status);
  });

  // The local server's own listener only (why: before "what Node's parser refuses" below).
  if (TARGET === 'local') {
    it('CONNECT (authority form) → 404 envelope', async () => {
      await expectEnvelope(await sendRaw('/', 'CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n'), '127.0.0.1:443', 404);
    });
  }
});

describe('oversized requests: API Gateway’s limits, always with the envelope, never a reset', () => {
  const pad = (target: string, length: number) => `${target}?pad=${'a'.repeat(length - target.length - 5)}`;

  it('a URL of 10,240 characters is served; one more is 414, with CORS on the Embed API only', async () => {
    for (const base of ['/api/embed/v1/events/evt_jazz01', '/api/public/v1/events/evt_jazz01']) {
      await expectEnvelope(await send({ method: 'GET', target: pad(base, 10_240), headers: [key] }), base, 200);
      await expectEnvelope(await send({ method: 'GET', target: pad(base, 10_241), headers: [key] }), base, 414);
    }
  });

  it.each([16_000, 100_000, 900_000, 3_000_000])('a URL of %i characters is 414', async (length) => {
    const target = pad('/api/embed/v1/events/evt_jazz01', length);
    await expectEnvelope(await send({ method: 'GET', target, headers: [] }), target, 414);
  });

  it.each([11_000, 16_000, 100_000, 900_000, 3_000_000])('%i bytes of headers are 431', async (size) => {
    for (const target of ['/api/embed/v1/events/evt_jazz01', '/api/public/v1/events/evt_jazz01']) {
      await expectEnvelope(await send({ method: 'GET', target, headers: [key, ['x-pad', 'p'.repeat(size)]] }), target, 431);
    }
  });

  it('HEAD gets the same status and headers, without a body', async () => {
    const target = '/api/embed/v1/events/evt_jazz01';
    const answer = await send({ method: 'HEAD', target, headers: [['x-pad', 'p'.repeat(3_000_000)]] });
    await expectEnvelope(answer, target, 431, true);
    expect(answer.body).toBe('');
  });

  it('a path parameter past its documented maxLength is the 400 envelope, however long, on both surfaces, and never reaches the table', async () => {
    const calls = await routeStoreCalls(async () => {
      for (const length of [69, 1_000, 9_000]) {
        const id = `evt_${'a'.repeat(length - 4)}`;
        for (const target of [`/api/embed/v1/events/${id}`, `/api/embed/v1/users/${'a'.repeat(length)}/events`, `/api/embed/v1/events/${id}/event.ics`]) {
          await expectEnvelope(await send({ method: 'GET', target, headers: [] }), target, 400);
        }
      }
      // The Public API: within the method ARN's 1,600 bytes, the route's own validation answers.
      for (const target of [`/api/public/v1/events/evt_${'a'.repeat(1_000)}`, `/api/public/v1/users/${'a'.repeat(1_000)}/past-events`]) {
        await expectEnvelope(await send({ method: 'GET', target, headers: [key] }), target, 400);
      }
    });
    // The bundles validate before they read: not one DynamoDB call (the rehearsal records every call; locally null).
    if (calls) expect(calls).toEqual([]);
  });

  it('a method ARN over 1,600 bytes on the Public API is 414, before the authorizer runs', async () => {
    const target = `/api/public/v1/users/${'a'.repeat(1_600)}/events`;
    await expectEnvelope(await send({ method: 'GET', target, headers: [] }), target, 414);
  });
});

describe('the old prefix and the local server’s pages under hostile input (PRODUCT P15)', () => {
  it.each([
    ['/api/ext/v1/events/evt_jazz01?__proto__=1&constructor=x&limit[]=2', '/api/public/v1/events/evt_jazz01?__proto__=1&constructor=x&limit%5B%5D=2'],
    ['/api/ext/v1/users/alice/events?type=past&type=%FF&%C0%AE=..', '/api/public/v1/users/alice/events?type=past&type=%EF%BF%BD&%EF%BF%BD%EF%BF%BD=..'],
    ['http://other/api/ext/v1/users/alice/events?type=past', '/api/public/v1/users/alice/events?type=past'],
    ['/api/ext/v1', '/api/public/v1'],
    ['/api/ext/v1//events/%2E%2E', '/api/public/v1//events/%2E%2E'],
  ])('%s → 308 to %s, no CORS, whatever the key', async (target, location) => {
    for (const method of ['GET', 'HEAD', 'POST', 'OPTIONS']) {
      const answer = await send({ method, target, headers: [['x-events-api-key', 'junk']] });
      expect([answer.status, answer.headers.location]).toEqual([308, `${stagePrefix()}${location}`]);
      const unstaged = { ...answer, headers: { ...answer.headers, location } };
      expect(violations(unstaged, { ...expectationsFor(method, target), bodyExpected: method !== 'HEAD', secrets })).toEqual([]);
    }
  });

  it("the Location leads to the Public API's answer on the same host: the stage's, on the rehearsal, as on an execute-api URL", async () => {
    const answer = await send({ method: 'GET', target: '/api/ext/v1/events/evt_jazz01?x=1', headers: [key] });
    expect([answer.status, answer.headers.location]).toEqual([308, `${stagePrefix()}/api/public/v1/events/evt_jazz01?x=1`]);
    const followed = await send({ method: 'GET', target: String(answer.headers.location), headers: [key] });
    const direct = await send({ method: 'GET', target: '/api/public/v1/events/evt_jazz01', headers: [key] });
    expect([followed.status, JSON.parse(followed.body)]).toEqual([200, JSON.parse(direct.body)]);
  });

  it('…/events/{eventId}.ics with prototype-named parameters is the 308 to the feed, with CORS; the feed answers text/calendar', async () => {
    const target = '/api/embed/v1/events/evt_jazz01.ics?__proto__=1&constructor=x';
    const answer = await send({ method: 'GET', target, headers: [['toString', '1']] });
    await expectEnvelope(answer, target, 308);
    expect(answer.headers.location).toBe('evt_jazz01/event.ics');
    const feed = '/api/embed/v1/events/evt_jazz01/event.ics?valueOf=1';
    const calendar = await send({ method: 'GET', target: feed, headers: [['__proto__', '1']] });
    await expectEnvelope(calendar, feed, 200);
    expect(calendar.headers['content-type']).toMatch(/^text\/calendar/);
  });

  it('an oversized request under the old prefix is refused first, without CORS', async () => {
    const target = `/api/ext/v1/events/evt_jazz01?pad=${'a'.repeat(10_240)}`;
    await expectEnvelope(await send({ method: 'GET', target, headers: [] }), target, 414);
    await expectEnvelope(await send({ method: 'GET', target: '/api/ext/v1/events/evt_jazz01', headers: [['x-pad', 'p'.repeat(20_000)]] }), '/api/ext/v1/events/evt_jazz01', 431);
  });

  it.each(['/docs?__proto__=1', '/docs/embed?constructor=1&toString', 'http://other/docs', '/images/default-avatar.png?valueOf=1', '/embed/widget.js?a[]=1'])('GET %s is the local server’s page or file; the stack has none: 404', async (target) => {
    const answer = await send({ method: 'GET', target, headers: [['__proto__', '1']] });
    if (TARGET === 'rehearsal') {
      // No resource of the template serves them. In AWS a path no resource has gets the MISSING_AUTHENTICATION_TOKEN
      // gateway response ("…including the cases when the client attempts to invoke an unsupported API method or
      // resource", https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html),
      // which the template maps to the 404 envelope.
      await expectEnvelope(answer, target, 404);
      return;
    }
    expect(violations(answer, { ...expectationsFor('GET', target), bodyExpected: true, secrets })).toEqual([]);
    expect(answer.status).toBe(200);
  });

  it.each([
    ['GET', '/docs/'],
    ['GET', '/docs/../docs'],
    ['GET', '/docs/%2E%2E/embed'],
    ['GET', '//docs'],
    ['POST', '/docs'],
    ['HEAD', '/docs/embed'],
  ])('%s %s names no page: the 404 envelope', async (method, target) => {
    await expectEnvelope(await send({ method, target, headers: [] }), target, 404, method === 'HEAD', method);
  });
});

describe('a method no route has', () => {
  it('a HEAD with a stray body gets its own answer, and nothing after it', async () => {
    const target = '/api/embed/v1/events/evt_jazz01';
    await expectEnvelope(await send({ method: 'HEAD', target, headers: [], body: '{"a":1}' }), target, 404, true); // routes are GET only
  });
});

/**
 * The local server's own features, which AWS does not have, are tested on the
 * local server only: what its HTTP listener answers to bytes no HTTP client
 * sends (in AWS, API Gateway's front end answers those before any REST API,
 * gateway response or function sees them; AWS documents neither its answers
 * nor a way to shape them: gateway responses cover what reaches an API,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html),
 * its default images (no resource of the stack) and its start-up. The
 * rehearsal's listener is the local server's own code (local/http-server.ts),
 * so running these there would test that code twice and say nothing of AWS.
 */
if (TARGET === 'local') {
  describe('what Node’s parser refuses is answered with the envelope too', () => {
    it.each([
      ['an invalid header name', 'GET /api/embed/v1/events/x HTTP/1.1\r\nHost: h\r\nBad Header: 1\r\n\r\n', '/api/embed/v1/events/x', 400],
      ['an invalid header name (Public)', 'GET /api/public/v1/events/x HTTP/1.1\r\nHost: h\r\nBad Header: 1\r\n\r\n', '/api/public/v1/events/x', 400],
      ['a bad Content-Length', 'GET /api/embed/v1/events/x HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\n', '/api/embed/v1/events/x', 400],
      ['a raw non-ASCII byte in the target', 'GET /api/embed/v1/events/\xff HTTP/1.1\r\nHost: h\r\n\r\n', '/api/embed/v1/events/', 400],
      ['an unknown method', 'FOO /api/embed/v1/events/x HTTP/1.1\r\nHost: h\r\n\r\n', '/api/embed/v1/events/x', 404],
      ['an HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', '*', 400],
      ['no Host header', 'GET /api/embed/v1/events/evt_jazz01 HTTP/1.1\r\nConnection: close\r\n\r\n', '/api/embed/v1/events/evt_jazz01', 200],
      ['an unknown Expect', 'GET /api/embed/v1/events/evt_jazz01 HTTP/1.1\r\nHost: h\r\nExpect: nothing\r\nConnection: close\r\n\r\n', '/api/embed/v1/events/evt_jazz01', 200],
    ])('%s', async (_name, bytes, target, status) => {
      await expectEnvelope(await sendRaw(target, Buffer.from(bytes, 'latin1')), target, status, false, bytes.slice(0, bytes.indexOf(' ')));
    });

  });

  describe('the default cover and avatar', () => {
    /** Checks the PNG structure: signature, every chunk's CRC, IHDR, and IDAT inflating to the pixel rows. */
    function pngSize(png: Buffer): { width: number; height: number } {
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      const idat: Buffer[] = [];
      let ihdr: Buffer | undefined;
      let offset = 8;
      let type = '';
      while (offset < png.length) {
        const length = png.readUInt32BE(offset);
        type = png.toString('latin1', offset + 4, offset + 8);
        const data = png.subarray(offset + 8, offset + 8 + length);
        expect(png.readUInt32BE(offset + 8 + length)).toBe(crc32(png.subarray(offset + 4, offset + 8 + length)) >>> 0);
        if (type === 'IHDR') ihdr = data;
        if (type === 'IDAT') idat.push(data);
        offset += 12 + length;
      }
      expect(type).toBe('IEND');
      const width = ihdr!.readUInt32BE(0);
      const height = ihdr!.readUInt32BE(4);
      expect([...ihdr!.subarray(8)]).toEqual([8, 2, 0, 0, 0]); // 8-bit RGB
      expect(inflateSync(Buffer.concat(idat)).length).toBe(height * (1 + width * 3));
      return { width, height };
    }

    it.each([
      ['/images/default-cover.png', { width: 1200, height: 630 }],
      ['/images/default-avatar.png', { width: 256, height: 256 }],
    ])('%s is a valid PNG, cacheable and readable from any origin', async (path, size) => {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      expect(res.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      const body = Buffer.from(await res.arrayBuffer());
      expect(Number(res.headers.get('content-length'))).toBe(body.length);
      expect(pngSize(body)).toEqual(size);
      expect((await fetch(`${server.url}${path}`, { method: 'HEAD' })).headers.get('content-type')).toBe('image/png');
    });

    it('are what an event without images points at, with the default siteUrl', async () => {
      const res = await fetch(`${server.publicBaseUrl}/events/evt_meetup02`, { headers: { 'x-events-api-key': KEYS.both } });
      const { data } = (await res.json()) as { data: { cover: string; creator: { image: string } } };
      for (const url of [data.cover, data.creator.image].filter((u) => u.includes('/images/default-'))) {
        expect((await fetch(url.replace('localhost', '127.0.0.1'))).headers.get('content-type')).toBe('image/png');
      }
      expect(data.cover).toMatch(/\/images\/default-cover\.png$/);
    });
  });

  describe('a request that arrives while the server is still starting', () => {
    it('is accepted by a listener whose handler already exists, waits for the app and is answered', async () => {
      const app = deferred<RequestListener>();
      const http: Server = servingWhenReady(app.promise);
      // The handler is attached before listen: nothing the port accepts can go unheard.
      expect(http.listenerCount('request')).toBe(1);
      await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
      try {
        const received = new Promise<void>((resolve) => http.once('request', () => resolve()));
        const answer = sendTo((http.address() as AddressInfo).port, { method: 'GET', target: '/api/embed/v1/events/evt_jazz01', headers: [] });
        await received; // in, while the app does not exist yet
        app.resolve((_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"success":true,"message":"ready","data":null}');
        });
        expect((await answer).status).toBe(200);
      } finally {
        http.closeAllConnections();
        await new Promise((resolve) => http.close(resolve));
      }
    });
  });
}
