import { describe, expect, it } from '@jest/globals';
import { validateDataset, type Dataset } from '../../lambdas/core/dataset.js';
import type { TableItem } from '../../lambdas/store/table/items.js';
import { INDEXES } from '../../lambdas/store/table/table.js';
import { datasetToItems } from '../../lambdas/store/changes/writer.js';
import { KEYS, demoDataset } from '../support/fixtures.js';

const dataset: Dataset = (() => {
  const r = validateDataset(demoDataset());
  if (!r.ok) throw new Error(r.problems.join('\n'));
  return r.dataset;
})();
const { items, summary } = datasetToItems(dataset);
const indexAttributes = Object.values(INDEXES).flatMap((i) => [i.partitionKey, i.sortKey]);
const hasIndexKey = (item: TableItem) => indexAttributes.some((a) => a in item);
/** An item of the event's partition or of one of its guest shards (table.ts, guestShard). */
const ofEvent = (i: TableItem, eventId: string) => i.pk === `EVENT#${eventId}` || String(i.pk).startsWith(`EVENT#${eventId}#`);
const hiddenIds = dataset.events.filter((e) => e.status !== 'published' || e.visibility !== 'public').map((e) => e.id);

describe('datasetToItems', () => {
  it('gives hidden events no index key at all, so no read path can reach them', () => {
    expect(hiddenIds.length).toBeGreaterThanOrEqual(4);
    const hidden = items.filter((i) => hiddenIds.some((id) => ofEvent(i, id)));
    expect(hidden.length).toBeGreaterThan(0);
    for (const item of hidden) expect(hasIndexKey(item)).toBe(false);
  });

  it('indexes every public event, its linked RSVPs and its profile entries', () => {
    const publicEvents = items.filter((i) => i.type === 'EVENT' && !hiddenIds.includes(i.event_id));
    expect(publicEvents).toHaveLength(summary.events.public);
    for (const e of publicEvents) expect(e).toEqual(expect.objectContaining({ gsi1pk: `EVENT#${e.pk.slice(6)}`, gsi2pk: expect.stringMatching(/#HOSTED$/) }));
  });

  it('stores no anonymous RSVP, e-mail, phone or plaintext key', () => {
    const text = JSON.stringify(items);
    for (const secret of ['anon@example.com', 'alice@example.com', '+1-555-0100', '+1-555-0199', 'Anon Guest', 'Walk-in', ...Object.values(KEYS)]) {
      expect(text).not.toContain(secret);
    }
    expect(items.some((i) => 'email' in i || 'phone' in i)).toBe(false);
    expect(summary.rsvps.anonymous).toBe(2);
  });

  it('counts guests per status, linked users only, in the count buckets beside the event (not on its item)', () => {
    const jazz = items.find((i) => i.pk === 'EVENT#evt_jazz01' && i.type === 'EVENT');
    expect(jazz).not.toHaveProperty('guest_counts');
    const buckets = items.filter((i) => i.pk === 'EVENT#evt_jazz01' && i.type === 'GUEST_COUNT_SUMMARY') as unknown as { yes: number; maybe: number; no: number }[];
    expect(buckets.reduce((n, b) => ({ yes: n.yes + b.yes, maybe: n.maybe + b.maybe, no: n.no + b.no }), { yes: 0, maybe: 0, no: 0 })).toEqual({ yes: 3, maybe: 1, no: 1 });
  });

  it('puts an event in the profile of its creator and of yes/maybe guests, once each', () => {
    const members = items.filter((i) => i.type === 'PROFILE_ENTRY' && ofEvent(i, 'evt_jazz01')).map((i) => i.sk).sort();
    expect(members).toEqual(['PROFILE#usr_alice', 'PROFILE#usr_bob', 'PROFILE#usr_carol', 'PROFILE#usr_eve', 'PROFILE#usr_frank']);
  });

  it('normalises every datetime to toISOString()', () => {
    const rsvp = items.find((i) => i.type === 'RSVP' && i.sk === 'RSVP#usr_frank');
    expect(rsvp).toMatchObject({ rsvp_date: '2026-10-05T07:30:00.000Z', gsi3sk: '2026-10-05T07:30:00.000Z#usr_frank' });
  });

  it('keys users by id, indexes them by lower-cased username and keeps the display form', () => {
    expect(items.find((i) => i.type === 'USER' && i.user_id === 'usr_alice')).toMatchObject({
      pk: 'USER#usr_alice',
      gsi1pk: 'USERNAME#alice',
      user: { username: 'Alice' },
      version: 0,
    });
  });

  it('stores each source once with version 0, and links each user to the events they host or answered', () => {
    const sources = items.filter((i) => i.type === 'EVENT_SOURCE' || i.type === 'RSVP_SOURCE' || i.type === 'USER');
    expect(sources.every((i) => 'version' in i && i.version === 0)).toBe(true);
    expect(sources.filter((i) => i.type === 'EVENT_SOURCE')).toHaveLength(dataset.events.length);
    const links = items.filter((i) => i.type === 'USER_EVENT_LINK' && i.pk === 'USER#usr_bob').map((i) => i.sk).sort();
    expect(links).toEqual(['LINK#evt_bobtalk09', 'LINK#evt_draft04', 'LINK#evt_gallery10', 'LINK#evt_hack08', 'LINK#evt_jazz01', 'LINK#evt_secret03']);
    expect(new Set(items.map((i) => `${i.pk}/${i.sk}`)).size).toBe(items.length);
  });

  it('is deterministic', () => {
    expect(datasetToItems(dataset).items).toEqual(items);
  });
});
