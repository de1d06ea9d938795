/**
 * Calendars that update (issue 61 item 3), over HTTP from the local server,
 * every calendar parsed with ical.js: after an event's start moved (changes
 * at versions 5 and 7), its own `.ics` and its host's feed carry SEQUENCE 1
 * then 2, with LAST-MODIFIED and DTSTAMP the time each move was applied; a
 * change calendars do not show moves none of them; versions that are
 * millisecond timestamps are counted, never copied; a deletion and the
 * event's return go on counting; `data:load --replace` (local/resync.ts)
 * keeps the count when FILE's event reads the same and counts one more when
 * it does not. The change path runs against the server's own store.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import ICAL from 'ical.js';
import type { Dataset, SourceEvent } from '../../lambdas/core/dataset.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { executeResync, planResync, scanTable } from '../../local/resync.js';
import { demoDataset } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { startLoopbackStore } from '../support/store.js';

let store: Awaited<ReturnType<typeof startLoopbackStore>>;
let server: TestServer;
let now = '2026-11-21T12:00:00.000Z';
let applier: ChangeApplier;

beforeAll(async () => {
  store = await startLoopbackStore();
  server = await startTestServer({ storeEndpoint: store.endpoint, siteUrl: 'https://events.example' });
  applier = new ChangeApplier(store.client, server.tableName, { clock: () => new Date(now) });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await store?.close();
});

const ID = 'evt_jazz01';
const loaded = (): SourceEvent => structuredClone(demoDataset().events.find((e) => e.id === ID)!);
/** The demo event moved by `days` (start and end), from where the demo data has it. */
const moved = (days: number, over: Partial<SourceEvent> = {}): SourceEvent => {
  const e = loaded();
  const by = (iso: string) => new Date(Date.parse(iso) + days * 86_400_000).toISOString();
  return { ...e, start_date: by(e.start_date), ...(e.end_date ? { end_date: by(e.end_date) } : {}), ...over };
};
const host = () => demoDataset().users.find((u) => u.id === loaded().creator_id)!.username;

/** The event's entry in a calendar, as ical.js reads it. */
async function entry(path: string) {
  const reply = await get(`${server.embedBaseUrl}${path}`);
  expect(reply.status).toBe(200);
  const vevent = new ICAL.Component(ICAL.parse(reply.text)).getAllSubcomponents('vevent').find((v) => String(v.getFirstPropertyValue('uid')).startsWith(`${ID}@`))!;
  const time = (name: string) => (vevent.getFirstPropertyValue(name) as ICAL.Time | null)?.toJSDate().toISOString() ?? null;
  return { sequence: Number(vevent.getFirstPropertyValue('sequence')), stamp: time('dtstamp'), modified: time('last-modified'), start: time('dtstart'), created: time('created'), summary: String(vevent.getFirstPropertyValue('summary')) };
}
/** The event's own calendar and its host's feed. */
const both = async () => [await entry(`/events/${ID}/event.ics`), await entry(`/users/${host()}/events.ics`)];
const created = () => new Date(loaded().created_at).toISOString();

describe("an event's calendar entries follow its changes", () => {
  it('as loaded: SEQUENCE 0, LAST-MODIFIED and DTSTAMP its creation', async () => {
    for (const e of await both()) expect(e).toMatchObject({ sequence: 0, modified: created(), stamp: created(), created: created() });
  });

  it('after the start moved at versions 5 and 7: SEQUENCE 1, then 2, each stamped when the move was applied', async () => {
    now = '2026-11-21T13:00:00.000Z';
    expect(await applier.apply({ type: 'event.upserted', version: 5, event: moved(1) })).toMatchObject({ result: 'applied' });
    for (const e of await both()) expect(e).toMatchObject({ sequence: 1, stamp: now, modified: now, start: moved(1).start_date });
    now = '2026-11-21T14:30:00.000Z';
    expect(await applier.apply({ type: 'event.upserted', version: 7, event: moved(2) })).toMatchObject({ result: 'applied' });
    for (const e of await both()) expect(e).toMatchObject({ sequence: 2, stamp: now, modified: now, start: moved(2).start_date, created: created() });
  });

  it('a change calendars do not show (the cost) moves nothing; a stale change changes nothing', async () => {
    const before = await both();
    now = '2026-11-21T16:00:00.000Z';
    expect(await applier.apply({ type: 'event.upserted', version: 8, event: moved(2, { cost: 99 }) })).toMatchObject({ result: 'applied' });
    expect(await applier.apply({ type: 'event.upserted', version: 6, event: moved(0, { title: 'Old' }) })).toMatchObject({ result: 'stale' });
    expect(await both()).toEqual(before);
  });

  it('a new title is a revision too, stamped after the last even when the clock reads earlier', async () => {
    now = '2026-11-21T14:00:00.000Z'; // a Lambda whose clock is behind the one that applied version 7
    expect(await applier.apply({ type: 'event.upserted', version: 9, event: moved(2, { title: 'Rooftop Jazz (indoors)', cost: 99 }) })).toMatchObject({ result: 'applied' });
    for (const e of await both()) expect(e).toMatchObject({ sequence: 3, stamp: '2026-11-21T14:30:01.000Z', modified: '2026-11-21T14:30:01.000Z' });
  });

  it('versions that are millisecond timestamps are counted, not copied: SEQUENCE stays an iCalendar INTEGER', async () => {
    now = '2026-11-22T09:00:00.000Z';
    const version = Date.parse(now); // 1.8e12, past 31 bits
    expect(await applier.apply({ type: 'event.upserted', version, event: moved(3, { title: 'Rooftop Jazz (indoors)', cost: 99 }) })).toMatchObject({ result: 'applied' });
    for (const e of await both()) expect(e).toMatchObject({ sequence: 4, modified: now });
  });

  it('deleted and back: the count goes on from where it was', async () => {
    const version = Date.parse(now) + 1;
    expect(await applier.apply({ type: 'event.deleted', version, event_id: ID })).toMatchObject({ result: 'applied' });
    expect((await get(`${server.embedBaseUrl}/events/${ID}/event.ics`)).status).toBe(404);
    now = '2026-11-22T10:00:00.000Z';
    expect(await applier.apply({ type: 'event.upserted', version: version + 1, event: moved(3, { title: 'Rooftop Jazz (indoors)', cost: 99 }) })).toMatchObject({ result: 'applied' });
    for (const e of await both()) expect(e).toMatchObject({ sequence: 5, modified: now });
  });
});

describe('data:load --replace and the calendar history', () => {
  const resync = async (file: Dataset, at: string) => executeResync(store.client, server.tableName, planResync(await scanTable(store.client, server.tableName), file, new Date(at)), {});
  const withEvent = (event: SourceEvent): Dataset => ({ ...demoDataset(), events: demoDataset().events.map((e) => (e.id === ID ? event : e)) });

  it("keeps the count when FILE's event reads the same in a calendar (its cost may differ)", async () => {
    const before = await both();
    await resync(withEvent(moved(3, { title: 'Rooftop Jazz (indoors)', cost: 1 })), '2026-11-23T08:00:00.000Z');
    expect(await both()).toEqual(before);
  });

  it('counts one more, stamped with the run, when it reads otherwise; the events FILE leaves as they were keep theirs', async () => {
    const others = await get(`${server.embedBaseUrl}/users/${host()}/events.ics`);
    await resync(withEvent(moved(4)), '2026-11-23T09:00:00.000Z');
    for (const e of await both()) expect(e).toMatchObject({ sequence: 6, modified: '2026-11-23T09:00:00.000Z', summary: loaded().title, start: moved(4).start_date });
    // The host's other events: the same entries as before (only evt_jazz01's changed).
    const after = await get(`${server.embedBaseUrl}/users/${host()}/events.ics`);
    const othersOf = (text: string) => new ICAL.Component(ICAL.parse(text)).getAllSubcomponents('vevent').filter((v) => !String(v.getFirstPropertyValue('uid')).startsWith(`${ID}@`)).map((v) => v.toString());
    expect(othersOf(after.text)).toEqual(othersOf(others.text));
  });

  it("an event FILE no longer has keeps its count on its tombstone, and a FILE that brings it back counts one more", async () => {
    await resync({ ...demoDataset(), events: demoDataset().events.filter((e) => e.id !== ID), rsvps: (demoDataset().rsvps ?? []).filter((r) => r.event_id !== ID) }, '2026-11-23T10:00:00.000Z');
    expect((await get(`${server.embedBaseUrl}/events/${ID}/event.ics`)).status).toBe(404);
    await resync(withEvent(moved(4)), '2026-11-23T11:00:00.000Z');
    for (const e of await both()) expect(e).toMatchObject({ sequence: 7, modified: '2026-11-23T11:00:00.000Z' });
  });
});
