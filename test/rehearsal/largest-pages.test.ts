/**
 * Every answer fits what Lambda can return (6 MB), shown on the rehearsal of
 * the staging template (the bundles behind the template's gateway, Lambda's
 * response limit enforced: a larger answer is a 502). The review (R4) found
 * a feed page of 100 events at the contract's maxima at 7.85 MB, and lists
 * of 100 at 8.86 MB when their texts held characters JSON escapes. Here a
 * host with 150 events and an event with 100 guests, every text at its
 * maximum in answer bytes, made of the characters that cost most there
 * (quotes, backslashes, newlines; commas and semicolons, which iCalendar
 * escapes), are served at the largest page of every list and feed route.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TEXT_MAX, validateDataset } from '../../lambdas/core/dataset.js';
import { textResponseBytes } from '../../lambdas/core/response-size.js';
import { REHEARSAL_STAGES } from '../../local/rehearsal/checks.js';
import { startRehearsal, type Rehearsal } from '../../local/rehearsal/rehearsal.js';
import { MAX_RESPONSE_BYTES } from '../../local/rehearsal/lambda-host.js';
import { NOW } from '../support/fixtures.js';

/** A text of exactly `bytes` answer bytes, of the characters an answer escapes (and iCalendar too), some of them three bytes wide. */
function costly(bytes: number): string {
  const unit = '",\\;\n語'; // 4 + 1 + 4 + 1 + 3 + 3 = 16 bytes
  let out = unit.repeat(Math.floor(bytes / 16));
  while (textResponseBytes(out) < bytes) out += 'a';
  return out;
}
const url = (bytes: number) => `https://img.example/${'p'.repeat(bytes - 'https://img.example/'.length)}`;
const day = 86_400_000;

function dataset() {
  const host = { id: 'usr_host', username: 'host', name: costly(TEXT_MAX.name), image: url(TEXT_MAX.url) };
  const guests = Array.from({ length: 100 }, (_, i) => ({ id: `usr_g${i}`, username: `guest${i}`, name: costly(TEXT_MAX.name), image: url(TEXT_MAX.url), verification_status: 'verified' as const }));
  // 110 upcoming (a page of 100 and more), 40 in the iCalendar feed's past window: more than fit 6 MB unbounded.
  const starts = [...Array.from({ length: 110 }, (_, i) => Date.parse(NOW) + (i + 1) * day), ...Array.from({ length: 40 }, (_, i) => Date.parse(NOW) - (i + 1) * day)];
  const events = starts.map((start, i) => ({
    id: `evt_${String(i).padStart(3, '0')}`,
    creator_id: host.id,
    title: costly(TEXT_MAX.title),
    description: costly(TEXT_MAX.description),
    cover: url(TEXT_MAX.url),
    location: { name: costly(TEXT_MAX.locationName), city: costly(TEXT_MAX.locationPart), country: costly(TEXT_MAX.locationPart) },
    start_date: new Date(start).toISOString(),
    timezone: 'UTC',
    status: 'published' as const,
    visibility: 'public' as const,
    created_at: new Date(Date.parse('2026-05-01T00:00:00Z') + i * 60_000).toISOString(),
    links: { spotify_url: url(TEXT_MAX.url), wavlake_url: url(TEXT_MAX.url) },
    contributions: { cashapp: costly(TEXT_MAX.handle), venmo: costly(TEXT_MAX.handle), paypal: costly(TEXT_MAX.handle), btc_lightning: costly(TEXT_MAX.lightning) },
  }));
  const rsvps = guests.map((g) => ({ event_id: events[0]!.id, user_id: g.id, status: 'yes' as const, rsvp_date: '2026-11-02T00:00:00.000Z' }));
  return { users: [host, ...guests], events, rsvps };
}

let rehearsal: Rehearsal;
beforeAll(async () => {
  const data = dataset();
  expect(validateDataset(data)).toMatchObject({ ok: true });
  const file = join(mkdtempSync(join(tmpdir(), 'largest-')), 'largest.json');
  writeFileSync(file, JSON.stringify(data));
  rehearsal = await startRehearsal({ context: REHEARSAL_STAGES.staging!, dataFile: file, now: new Date(NOW), throttle: false });
}, 300_000);
afterAll(async () => rehearsal?.close());

type Answer = { status: number; bytes: number; body: string };
async function get(path: string): Promise<Answer> {
  const res = await fetch(rehearsal.urlFor(path), { headers: { 'x-events-api-key': rehearsal.demoKey.key } });
  const body = await res.text();
  return { status: res.status, bytes: Buffer.byteLength(body), body };
}

describe('the largest page of every list and feed route fits in an answer (R4)', () => {
  it.each([
    ['/api/public/v1/users/host/events?type=upcoming&limit=100', 100],
    ['/api/public/v1/users/host/events?type=past&limit=100', 40],
    ['/api/public/v1/users/host/events?limit=100', 100],
    ['/api/public/v1/users/host/upcoming-events?limit=100', 100],
    ['/api/public/v1/users/host/past-events?limit=100', 40],
    ['/api/public/v1/events/evt_000/guests?status=all&limit=100', 100],
    ['/api/embed/v1/users/host/events?limit=100', 100],
  ])('%s: 200, the whole page, under the limit', async (path, count) => {
    const answer = await get(path);
    expect({ path, status: answer.status }).toEqual({ path, status: 200 });
    const data = JSON.parse(answer.body).data as unknown[] | { events: unknown[] };
    expect(Array.isArray(data) ? data.length : data.events.length).toBe(count);
    expect(answer.bytes).toBeLessThan(MAX_RESPONSE_BYTES);
  });

  it('the unpaginated lists answer 200 within their bound or ask for a narrower window, never more than Lambda returns', async () => {
    for (const path of ['/api/public/v1/users/host/profile-events', '/api/public/v1/users/host/profile-events?since=2026-12-01&to=2027-01-31']) {
      const answer = await get(path);
      expect({ path, ok: answer.status === 200 || (answer.status === 400 && /narrow it with since and to/.test(answer.body)) }).toEqual({ path, ok: true });
      expect(answer.bytes).toBeLessThan(MAX_RESPONSE_BYTES);
    }
  });

  it("the iCalendar feed keeps what fits, the upcoming events first", async () => {
    const answer = await get('/api/embed/v1/users/host/events.ics');
    expect(answer.status).toBe(200);
    expect(answer.bytes).toBeLessThan(MAX_RESPONSE_BYTES);
    expect(answer.body).toContain('evt_000');
  });

  it.each(['/api/public/v1/changes/events', '/api/public/v1/changes/users/host/events', '/api/public/v1/changes/events/evt_000/guests'])('%s: every page of 100 is 200 and under the limit, until every member is read', async (feed) => {
    const ids = new Set<string>();
    let cursor = '';
    for (let pages = 0, more = true; more; pages++) {
      expect(pages).toBeLessThan(20);
      const answer = await get(`${feed}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect({ feed, status: answer.status }).toEqual({ feed, status: 200 });
      expect(answer.bytes).toBeLessThan(MAX_RESPONSE_BYTES);
      const data = JSON.parse(answer.body).data as { changes: { id: string }[]; next_cursor: string; has_more: boolean };
      for (const c of data.changes) ids.add(c.id);
      cursor = data.next_cursor;
      more = data.has_more;
    }
    expect(ids.size).toBe(feed.endsWith('/guests') ? 100 : 150);
  });

  it('nothing failed or was denied on the way', () => {
    expect(rehearsal.problems()).toEqual([]);
  });
});
