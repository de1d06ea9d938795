/**
 * The adapter's HTTP client against a fault-injecting local server: which
 * answers are retried, how often, and how long it waits (through an injected
 * sleep, so nothing here waits for real time). A "hang" aborts the request's
 * injected timeout signal once the server has received it, exactly as the
 * timeout would.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startFaultServer, type Fault } from '../support/fault-server.js';
import type { ApiSettings } from '../../mcp/config.js';
import { PublicApiClient, retryAfterMs, type ClientDeps } from '../../mcp/public-api.js';


let base: string;
let faults: Fault[] = [];
let received: { url: string; authorization: string | undefined }[] = [];
let sleeps: number[] = [];
let logs: string[] = [];
let controllers: AbortController[] = [];
const ok: Fault = { status: 200, body: { success: true, message: 'Event evt_a retrieved', data: { id: 'evt_a' } } };

let server: Awaited<ReturnType<typeof startFaultServer>>;
beforeAll(async () => {
  server = await startFaultServer({ next: () => faults.shift() ?? ok, record: (req) => void received.push({ url: req.url ?? '', authorization: req.headers.authorization }), timeout: () => controllers.at(-1) });
  base = server.base;
});
afterAll(() => server.close());
beforeEach(() => {
  faults = [];
  received = [];
  sleeps = [];
  logs = [];
  controllers = [];
});

const KEY = 'pk_test_0123456789abcdefghijklmnopqrstuv';
function client(overrides: Partial<ApiSettings> = {}) {
  const config: ApiSettings = { apiKey: KEY, baseUrl: base, timeoutMs: 15_000, retryAttempts: 2, retryDelayMs: 250, ...overrides };
  const deps: ClientDeps = {
    fetch: (...args) => fetch(...args),
    sleep: async (ms) => void sleeps.push(ms),
    random: () => 0.5,
    timeoutSignal: () => {
      const c = new AbortController();
      controllers.push(c);
      return c.signal;
    },
    log: (m) => logs.push(m),
  };
  return new PublicApiClient(config, deps);
}

describe('retries', () => {
  it('sends the key as a Bearer token and returns the envelope on success', async () => {
    const outcome = await client().get('/events/evt_a');
    expect(outcome).toEqual({ ok: true, status: 200, body: (ok as { body: unknown }).body, attempts: 1 });
    expect(received[0]?.authorization).toBe(`Bearer ${KEY}`);
  });

  it.each([408, 500, 502, 503, 504])('retries %i, then succeeds', async (status) => {
    faults = [{ status, body: { success: false, message: 'busy' } }];
    const outcome = await client().get('/events/evt_a');
    expect(outcome).toMatchObject({ ok: true, attempts: 2 });
    expect(received).toHaveLength(2);
  });

  it('backs off exponentially with jitter within [delay·2^n / 2, delay·2^n]', async () => {
    faults = [{ status: 503 }, { status: 503 }, { status: 503 }];
    const outcome = await client().get('/events/evt_a');
    expect(outcome).toMatchObject({ ok: false, status: 503, attempts: 3, message: 'The API answered HTTP 503 without a JSON body' });
    expect(received).toHaveLength(3);
    expect(sleeps).toEqual([188, 375]); // random() = 0.5: 125 + 62.5, 250 + 125
    const jittered = new PublicApiClient({ apiKey: KEY, baseUrl: base, timeoutMs: 1, retryAttempts: 5, retryDelayMs: 100 }, { ...({} as ClientDeps), random: Math.random });
    for (let retry = 1; retry <= 5; retry++) {
      const ms = jittered.backoffMs(retry);
      expect(ms).toBeGreaterThanOrEqual((100 * 2 ** (retry - 1)) / 2);
      expect(ms).toBeLessThanOrEqual(100 * 2 ** (retry - 1));
    }
  });

  it('honours Retry-After on 429, capped by the timeout', async () => {
    faults = [{ status: 429, headers: { 'retry-after': '3' }, body: { success: false, message: 'Too many requests. Please try again later.' } }];
    expect(await client().get('/events/evt_a')).toMatchObject({ ok: true, attempts: 2 });
    expect(sleeps).toEqual([3000]);

    sleeps = [];
    faults = [{ status: 429, headers: { 'retry-after': '86400' } }];
    expect(await client({ timeoutMs: 5000 }).get('/events/evt_a')).toMatchObject({ ok: true, attempts: 2 });
    expect(sleeps).toEqual([5000]);
  });

  it('retries a connection reset', async () => {
    faults = ['reset'];
    expect(await client().get('/events/evt_a')).toMatchObject({ ok: true, attempts: 2 });
    expect(logs[0]).toMatch(/network error \((ECONNRESET|UND_ERR_SOCKET)\)/);
  });

  it('retries a request that hangs past the timeout, then gives up with the reason', async () => {
    faults = ['hang', 'hang', 'hang'];
    const outcome = await client({ timeoutMs: 1234 }).get('/events/evt_a');
    expect(outcome).toEqual({ ok: false, status: null, message: 'no response within 1234 ms', details: null, attempts: 3 });
    expect(received).toHaveLength(3);
  });

  it('retries a refused connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const outcome = await client({ baseUrl: `http://127.0.0.1:${port}/api/public/v1` }).get('/events/evt_a');
    expect(outcome).toMatchObject({ ok: false, status: null, message: 'network error (ECONNREFUSED)', attempts: 3 });
  });

  it.each([400, 401, 403, 404])('never retries %i', async (status) => {
    faults = [{ status, body: { success: false, message: 'nope', errors: [{ field: 'limit', message: 'Limit must be between 1 and 100' }] } }];
    const outcome = await client().get('/users/alice/events');
    expect(outcome).toEqual({ ok: false, status, message: 'nope', details: [{ field: 'limit', message: 'Limit must be between 1 and 100' }], attempts: 1 });
    expect(received).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('treats a 200 that says success: false as a failure, without retrying', async () => {
    faults = [{ status: 200, body: { success: false, message: 'Something is off' } }];
    expect(await client().get('/events/evt_a')).toMatchObject({ ok: false, status: 200, message: 'Something is off', attempts: 1 });
  });

  it('makes exactly 1 + retryAttempts requests at most', async () => {
    faults = Array.from({ length: 10 }, () => ({ status: 500 }));
    expect(await client({ retryAttempts: 0 }).get('/events/evt_a')).toMatchObject({ ok: false, attempts: 1 });
    expect(received).toHaveLength(1);
  });

  it('never puts the key in a result or a log line', async () => {
    faults = [{ status: 503 }, 'reset', { status: 401, body: { success: false, message: 'Not authenticated.' } }];
    const outcome = await client().get('/events/evt_a');
    expect(JSON.stringify(outcome) + logs.join('\n')).not.toContain(KEY);
  });
});

describe('retryAfterMs', () => {
  it('reads delta-seconds and HTTP dates', () => {
    expect(retryAfterMs('7', 0)).toBe(7000);
    expect(retryAfterMs('Wed, 21 Oct 2026 07:28:10 GMT', Date.parse('Wed, 21 Oct 2026 07:28:00 GMT'))).toBe(10_000);
    expect(retryAfterMs('soon', 0)).toBeNull();
    expect(retryAfterMs(null, 0)).toBeNull();
  });
});
