/**
 * The project fuzzes itself, over real HTTP: hostile requests (see
 * test/support/hostile.ts) sent with node:http, which sends raw targets and
 * headers that fetch would refuse or normalise, to the real local server.
 * Every answer keeps the invariants, and the server stays healthy.
 *
 * Default: a few hundred seeded cases. FUZZ_RUNS=5000 (and FUZZ_SEED=n)
 * run more, e.g. `FUZZ_RUNS=5000 npx jest test/e2e/fuzz-http.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { KEYS } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { FUZZ, expectationsFor, fuzzParameters, hostileRequest, privateStrings, send, violations } from '../support/hostile.js';
import { startTestServer, type TestServer } from '../support/local.js';

let server: TestServer;
let port: number;
const secrets = privateStrings();

beforeAll(async () => {
  server = await startTestServer();
  port = Number(new URL(server.url).port);
});
afterAll(async () => server?.close());

describe(`hostile requests over HTTP (${FUZZ.runs} cases, seed ${FUZZ.seed})`, () => {
  it('never get a 5xx, always the envelope, CORS exactly on the Embed API, nothing private', async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(hostileRequest, async (req) => {
        const answer = await send(port, req);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        // node:http sends the method upper-cased (`get` goes out as GET).
        const problems = violations(answer, { ...expectationsFor(req.method.toUpperCase(), req.target), bodyExpected: req.method !== 'HEAD', secrets });
        expect(problems).toEqual([]);
      }),
      fuzzParameters(),
    );
    if (process.env.FUZZ_RUNS) process.stdout.write(`fuzz-http: ${FUZZ.runs} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}\n`);
    expect([...statuses.keys()].every((s) => s < 500)).toBe(true);
  }, 600_000);

  it('leaves the server healthy: a normal request on each API still succeeds', async () => {
    expect((await get(`${server.embedBaseUrl}/events/evt_jazz01`)).status).toBe(200);
    expect((await get(`${server.publicBaseUrl}/events/evt_jazz01`, { authorization: `Bearer ${KEYS.eventsOnly}` })).status).toBe(200);
    expect((await get(`${server.embedBaseUrl}/users/alice/events.ics`)).status).toBe(200);
    expect((await get(`${server.url}/api/ext/v1/events/evt_jazz01`)).headers.get('location')).toBe('/api/public/v1/events/evt_jazz01');
    expect((await fetch(server.docsUrl)).status).toBe(200);
    expect(server.responses.filter((s) => s >= 500)).toEqual([]);
  });
});
