/**
 * Deployment settings: Variant A (`--user-events-variant dated`) and a custom
 * service name, which renames the key header.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { PublicEvent } from '../../lambdas/core/event-mapper.js';
import { KEYS } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';

type Envelope<T> = { success: boolean; message: string; data: T };
let server: TestServer;
const headers = { 'x-gatherly-api-key': KEYS.both };
const api = <T>(path: string, h: Record<string, string> = headers) => get<Envelope<T>>(`${server.publicBaseUrl}${path}`, h);

beforeAll(async () => {
  server = await startTestServer({ userEventsVariant: 'dated', serviceName: 'gatherly', siteUrl: 'https://gatherly.example/' });
});
afterAll(async () => server?.close());

describe('Variant A: GET /users/{username}/events (dated)', () => {
  it('returns every hosted public event as an array, most recently created first, ties by id', async () => {
    const reply = await api<PublicEvent[]>('/users/alice/events');
    expect(reply.status).toBe(200);
    expect(reply.body.data.map((e) => e.id)).toEqual(['evt_tie07a', 'evt_tie07b', 'evt_workshop05', 'evt_jazz01', 'evt_meetup02', 'evt_picnic06']);
    expect(reply.body).not.toHaveProperty('pagination');
  });

  it('filters on start date with inclusive since/from/to', async () => {
    const { body } = await api<PublicEvent[]>('/users/alice/events?from=2026-06-01T11:00:00Z&to=2026-09-10');
    expect(body.data.map((e) => e.id)).toEqual(['evt_meetup02', 'evt_picnic06']);
    const none = await api<PublicEvent[]>('/users/alice/events?since=2030-01-01');
    expect(none.status).toBe(200);
    expect(none.body.data).toEqual([]);
  });

  it('ignores Variant B parameters and answers 404 "User not found" for an unknown user', async () => {
    expect((await api<PublicEvent[]>('/users/alice/events?type=upcoming&limit=1')).body.data).toHaveLength(6);
    const unknown = await api('/users/nobody/events');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ success: false, message: 'User not found' });
  });

  it('rejects a bad date', async () => {
    const reply = await api('/users/alice/events?to=31.12.2026');
    expect(reply.status).toBe(400);
    expect(reply.body.message).toBe('Invalid date format. Use ISO 8601 format');
  });
});

describe('serviceName', () => {
  it('names the key header x-{serviceName}-api-key', async () => {
    expect((await api('/events/evt_jazz01')).status).toBe(200);
    expect((await api('/events/evt_jazz01', { 'x-events-api-key': KEYS.both })).status).toBe(401);
    expect((await api('/events/evt_jazz01', { authorization: `Bearer ${KEYS.both}` })).status).toBe(200);
  });

  it('builds default images from siteUrl', async () => {
    const { body } = await api<PublicEvent>('/events/evt_meetup02');
    expect(body.data.cover).toBe('https://gatherly.example/images/default-cover.png');
  });
});
