/**
 * The client's retry rules against a fault-injecting upstream on 127.0.0.1:
 * 429 with Retry-After or X-RateLimit-Reset, 503, connection resets, hangs and
 * refused connections. Sleep and randomness are injected, and a "hang" aborts
 * the request's injected timeout signal once the server has it, exactly as
 * the timeout would, so no test waits for real time.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startFaultServer, type Fault } from '../support/fault-server.js';
import { ApiError, NetworkError, PublicClient, RateLimitError, type PublicClientOptions, type RetryEvent } from '../../client/src/index.js';


const KEY = 'pk_test_0123456789abcdefghijklmnopqrstuv';
const ok: Fault = { status: 200, body: { success: true, message: 'Event evt_a retrieved', data: { id: 'evt_a' } } };
const tooMany = (headers: Record<string, string>): Fault => ({ status: 429, headers, body: { success: false, message: 'Too many requests. Please try again later.' } });

let base: string;
let faults: Fault[] = [];
let received: { url: string; authorization: string | undefined; keyHeader: string | string[] | undefined }[] = [];
let sleeps: number[] = [];
let retries: RetryEvent[] = [];
let controllers: AbortController[] = [];

let server: Awaited<ReturnType<typeof startFaultServer>>;
beforeAll(async () => {
  server = await startFaultServer({ next: () => faults.shift() ?? ok, record: (req) => void received.push({ url: req.url ?? '', authorization: req.headers.authorization, keyHeader: req.headers['x-events-api-key'] }), timeout: () => controllers.at(-1) });
  base = server.base;
});
afterAll(() => server.close());
beforeEach(() => {
  faults = [];
  received = [];
  sleeps = [];
  retries = [];
  controllers = [];
});

function client(options: PublicClientOptions = {}) {
  return new PublicClient({
    apiKey: KEY,
    baseUrl: base,
    sleep: async (ms) => void sleeps.push(ms),
    random: () => 0.5,
    timeoutSignal: () => {
      const c = new AbortController();
      controllers.push(c);
      return c.signal;
    },
    onRetry: (event) => retries.push(event),
    ...options,
  });
}
const failure = (promise: Promise<unknown>) => promise.then(() => new Error('expected a failure'), (e: unknown) => e);

describe('what is retried', () => {
  it.each([408, 500, 502, 503, 504])('retries %i with backoff, then succeeds', async (status) => {
    faults = [{ status, body: { success: false, message: 'busy' } }];
    expect(await client().events.get('evt_a')).toEqual({ id: 'evt_a' });
    expect(received).toHaveLength(2);
    expect(sleeps).toEqual([188]); // 250 base, random 0.5: 125 + 62.5
  });

  it('backs off exponentially and gives up after the attempt budget with the last status', async () => {
    faults = [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }];
    const error = await failure(client({ maxRetries: 3, retryDelayMs: 100 }).events.get('evt_a'));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, attempts: 4, message: 'The API answered HTTP 503 without a JSON body' });
    expect(sleeps).toEqual([75, 150, 300]);
    expect(retries.map((r) => [r.attempt, r.maxAttempts, r.status])).toEqual([[2, 4, 503], [3, 4, 503], [4, 4, 503]]);
  });

  it('jitter stays within [base·2^n / 2, base·2^n]', async () => {
    faults = [{ status: 500 }, { status: 500 }, { status: 500 }];
    await failure(client({ random: Math.random, retryDelayMs: 1000 }).events.get('evt_a'));
    expect(sleeps).toHaveLength(2);
    sleeps.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(500 * 2 ** i);
      expect(ms).toBeLessThanOrEqual(1000 * 2 ** i);
    });
  });

  it.each([400, 401, 403, 404])('never retries %i', async (status) => {
    faults = [{ status, body: { success: false, message: 'nope', errors: [{ field: 'limit', message: 'Limit must be between 1 and 100' }] } }];
    const error = await failure(client().users.upcomingEvents('alice').page());
    expect(error).toMatchObject({ name: 'ApiError', status, message: 'nope', errors: [{ field: 'limit', message: 'Limit must be between 1 and 100' }], attempts: 1 });
    expect(received).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('retries a connection reset', async () => {
    faults = ['reset'];
    expect(await client().events.get('evt_a')).toEqual({ id: 'evt_a' });
    expect(retries[0]?.reason).toMatch(/network error \((ECONNRESET|UND_ERR_SOCKET)\)/);
  });

  it('retries a request that hangs past the timeout, then gives up with a NetworkError', async () => {
    faults = ['hang', 'hang', 'hang'];
    const error = await failure(client({ timeoutMs: 1234 }).events.get('evt_a'));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ status: null, message: 'no response within 1234 ms', attempts: 3 });
    expect(received).toHaveLength(3);
  });

  it('retries a refused connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await failure(client({ baseUrl: `http://127.0.0.1:${port}/api/public/v1` }).events.get('evt_a'));
    expect(error).toMatchObject({ name: 'NetworkError', message: 'network error (ECONNREFUSED)', attempts: 3 });
  });

  it('maxRetries: 0 makes exactly one request', async () => {
    faults = [{ status: 500 }];
    expect(await failure(client({ maxRetries: 0 }).events.get('evt_a'))).toMatchObject({ status: 500, attempts: 1 });
    expect(received).toHaveLength(1);
  });
});

describe('429: the wait the API asks for', () => {
  it('honours Retry-After', async () => {
    faults = [tooMany({ 'retry-after': '3', 'x-ratelimit-reset': '50' })];
    expect(await client().events.get('evt_a')).toEqual({ id: 'evt_a' });
    expect(sleeps).toEqual([3000]);
  });

  it('falls back to X-RateLimit-Reset (delta-seconds) without Retry-After', async () => {
    faults = [tooMany({ 'x-ratelimit-limit': '1000', 'x-ratelimit-reset': '5' })];
    expect(await client().events.get('evt_a')).toEqual({ id: 'evt_a' });
    expect(sleeps).toEqual([5000]);
  });

  it('reads an X-RateLimit-Reset that is a Unix timestamp as one', async () => {
    const now = Date.parse('2026-11-22T23:59:50Z');
    faults = [tooMany({ 'x-ratelimit-reset': String(Date.parse('2026-11-23T00:00:00Z') / 1000) })];
    await client({ now: () => now }).events.get('evt_a');
    expect(sleeps).toEqual([10_000]);
  });

  it('does not sleep for a daily quota: a wait over maxRetryDelayMs is a RateLimitError carrying it', async () => {
    faults = [tooMany({ 'retry-after': '72000', 'x-ratelimit-reset': '72000' })];
    const error = await failure(client().events.get('evt_a'));
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, attempts: 1, retryAfterMs: 72_000_000, message: 'Too many requests. Please try again later.' });
    expect(sleeps).toEqual([]);
    expect(received).toHaveLength(1);
  });

  it('maxRetryDelayMs and onLongWait are configurable: clamp waits the cap and retries', async () => {
    faults = [tooMany({ 'retry-after': '72000' })];
    expect(await client({ maxRetryDelayMs: 60_000, onLongWait: 'clamp' }).events.get('evt_a')).toEqual({ id: 'evt_a' });
    expect(sleeps).toEqual([60_000]);
  });

  it('a 429 left when the attempts are spent is a RateLimitError with the last wait asked', async () => {
    faults = [tooMany({ 'retry-after': '1' }), tooMany({ 'retry-after': '2' })];
    const error = await failure(client({ maxRetries: 1 }).events.get('evt_a'));
    expect(error).toMatchObject({ name: 'RateLimitError', attempts: 2, retryAfterMs: 2000 });
    expect(sleeps).toEqual([1000]);
  });

  it('a 429 without any hint backs off like a 5xx', async () => {
    faults = [tooMany({})];
    await client().events.get('evt_a');
    expect(sleeps).toEqual([188]);
  });
});

describe('the key', () => {
  it('goes as a Bearer token, or in the named header', async () => {
    await client().events.get('evt_a');
    await client({ keyHeader: 'x-events-api-key' }).events.get('evt_a');
    expect(received.map((r) => [r.authorization, r.keyHeader])).toEqual([[`Bearer ${KEY}`, undefined], [undefined, KEY]]);
  });

  it('comes from PUBLIC_API_KEY when not given', async () => {
    const saved = { key: process.env.PUBLIC_API_KEY, url: process.env.PUBLIC_API_BASE_URL };
    process.env.PUBLIC_API_KEY = KEY;
    process.env.PUBLIC_API_BASE_URL = base;
    try {
      await new PublicClient().events.get('evt_a');
      expect(received[0]?.authorization).toBe(`Bearer ${KEY}`);
    } finally {
      for (const [name, value] of [['PUBLIC_API_KEY', saved.key], ['PUBLIC_API_BASE_URL', saved.url]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('never appears in an error or a retry event', async () => {
    faults = [{ status: 503 }, 'reset', { status: 401, body: { success: false, message: 'Not authenticated.' } }];
    const error = (await failure(client().events.get('evt_a'))) as ApiError;
    expect(error.status).toBe(401);
    expect(JSON.stringify({ ...error, message: error.message, stack: error.stack }) + JSON.stringify(retries)).not.toContain(KEY);
  });
});
