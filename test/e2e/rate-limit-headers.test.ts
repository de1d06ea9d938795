/**
 * The rate-limit headers on every Public API answer of the local server
 * (issue 19): the daily quota everywhere, its reset on the routes' own
 * answers, and a Remaining that the server's own count decides, only where
 * that count ran. The Embed API has no quota and says none. In jest's
 * rehearsal project the same requests go to the synthesized stack
 * (test/support/target.ts), which is what AWS answers: no Remaining at all.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KEYS } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { startTarget, type Target } from '../support/target.js';

let server: Target;
beforeAll(async () => {
  server = await startTarget();
});
afterAll(async () => server?.close());

const RESET = String(Date.parse('2026-11-22T00:00:00Z') / 1000);
const publicGet = (path: string, key?: string) => get(`${server.publicBaseUrl}${path}`, key ? { authorization: `Bearer ${key}` } : {});

describe('rate-limit headers', () => {
  it("the routes' answers (200, 400, 404) carry Limit, Reset and the Remaining the count leaves", async () => {
    const answers = [
      await publicGet('/events/evt_jazz01', KEYS.both),
      await publicGet('/users/alice/upcoming-events?limit=many', KEYS.both),
      await publicGet('/events/evt_nope', KEYS.both),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 400, 404]);
    for (const r of answers) expect([r.headers.get('x-ratelimit-limit'), r.headers.get('x-ratelimit-reset')]).toEqual(['1000', RESET]);
    if (server.name === 'rehearsal') {
      // AWS: the usage plan counts in API Gateway, which tells the integration nothing of it (a key's usage is
      // read with the GetUsage API: https://docs.aws.amazon.com/apigateway/latest/api/API_GetUsage.html), so
      // the functions cannot say what is left; only the local server, which counts itself, can.
      for (const r of answers) expect(r.headers.get('x-ratelimit-remaining')).toBeNull();
      return;
    }
    const remaining = answers.map((r) => Number(r.headers.get('x-ratelimit-remaining')));
    for (const r of answers) expect([r.headers.get('x-ratelimit-limit'), r.headers.get('x-ratelimit-reset')]).toEqual(['1000', RESET]);
    // Each counted request leaves one fewer (other tests of this file use other keys).
    expect(remaining[1]).toBe(remaining[0]! - 1);
    expect(remaining[2]).toBe(remaining[1]! - 1);
    expect(remaining[0]).toBeLessThan(1000);
  });

  it("the gateway's own answers (401, 403, unknown route) carry the Limit only, as API Gateway's literal gateway responses do", async () => {
    const answers = [await publicGet('/events/evt_jazz01'), await publicGet('/events/evt_jazz01/guests', KEYS.eventsOnly), await publicGet('/no-such-route', KEYS.both)];
    expect(answers.map((r) => r.status)).toEqual([401, 403, 404]);
    for (const r of answers) {
      expect(r.headers.get('x-ratelimit-limit')).toBe('1000');
      expect(r.headers.get('x-ratelimit-reset')).toBeNull();
      expect(r.headers.get('x-ratelimit-remaining')).toBeNull();
    }
  });

  it('the OpenAPI document, which is not metered, says the quota and its reset but no Remaining', async () => {
    const r = await publicGet('/openapi.json');
    expect(r.status).toBe(200);
    expect([r.headers.get('x-ratelimit-limit'), r.headers.get('x-ratelimit-reset'), r.headers.get('x-ratelimit-remaining')]).toEqual(['1000', RESET, null]);
  });

  it('the Embed API says none', async () => {
    const r = await get(`${server.embedBaseUrl}/events/evt_jazz01`);
    expect(r.status).toBe(200);
    expect([...r.headers.keys()].filter((h) => h.startsWith('x-ratelimit'))).toEqual([]);
  });
});
