/**
 * Every key derived from data stays within DynamoDB's limits whatever the
 * dataset contract lets through (issue 59, item 3): a partition key at most
 * 2,048 bytes and a sort key at most 1,024, an index's key attributes alike
 * ("Service, account, and table quotas in Amazon DynamoDB": attribute
 * values used as keys). dynalite checks neither (its issue #35), so the
 * second half runs where the store does: this file is a change-path file
 * (jest.config.js), on DynamoDB Local too, which refuses what DynamoDB
 * refuses.
 *
 * - Place keys (index keys and feed scopes) and the search cursor, for any
 *   location the contract accepts (a property over text of every script,
 *   compatibility forms that decompose 18 times included).
 * - The other keys built from data: ids and usernames are bounded by their
 *   patterns (at most 68 and 64 ASCII characters), so every key of the table
 *   and its indexes is checked at those maxima.
 * - On the store: an event whose city and country are each 33 × U+FDFA (99
 *   bytes, folded to about 1,100) is applied through the change path, found
 *   by its own spelling, moved to another such place and found there.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { fixedClock } from '../../lambdas/core/clock.js';
import { eventSchema, TEXT_MAX, type Dataset, type SourceEvent } from '../../lambdas/core/dataset.js';
import { cityKey, countryKey, placeOf, placeQueriesOf, placeName } from '../../lambdas/core/place.js';
import { feedScopes } from '../../lambdas/core/feed-cursor.js';
import { sealSearchCursor, SEARCH_CURSOR_MAX_LENGTH } from '../../lambdas/core/search-cursor.js';
import { placeIndexKeys } from '../../lambdas/store/changes/derive.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { feedPartition, memberKey } from '../../lambdas/store/feeds/feed.js';
import { indexKeys, keys, placeSortKey } from '../../lambdas/store/table/table.js';
import { testKeyring } from '../support/feed-keys.js';
import { demoDataset } from '../support/fixtures.js';
import { placeEvent } from '../support/places.js';
import { startTestStore, type TestStore } from '../support/store.js';

const PARTITION_KEY_MAX_BYTES = 2048;
const SORT_KEY_MAX_BYTES = 1024;
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** A location part the contract accepts, of any script, often near its 100 bytes; compatibility forms that grow a lot are favoured. */
const part = fc
  .array(fc.oneof(fc.constantFrom('\uFDFA', '\uFDFB', '\u3300', '\u33FF', 'ﬃ', '#', '%', '*', 'Ł', 'ß', 'İ', 'पा'), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 })), { minLength: 1, maxLength: 60 })
  .map((chars) => {
    let out = '';
    for (const c of chars) if (eventSchema.shape.location.unwrap().unwrap().shape.city.safeParse(out + c).success) out += c;
    return out;
  })
  .filter((s) => s.trim() !== '');

/** And the longest growers at the contract's bound: 33 of a 3-byte character that decomposes into 18 (or into a kana word). */
const anyPart = fc.oneof(part, fc.constantFrom('\uFDFA'.repeat(33), '\uFDFB'.repeat(33), '\u3300'.repeat(33)));

describe('keys built from a place, for any location the contract accepts (property)', () => {
  it('index keys, feed partitions and the search cursor stay within their limits', async () => {
    await fc.assert(
      fc.asyncProperty(anyPart, anyPart, async (city, country) => {
        const location = { name: 'Hall', city, country };
        const keysOfEvent = placeIndexKeys({ event_id: `evt_${'x'.repeat(64)}`, location, start_date: '2027-03-10T18:00:00.000Z', timezone: 'UTC' });
        for (const [name, value] of Object.entries(keysOfEvent)) expect([name, bytes(value) <= (name.endsWith('pk') ? PARTITION_KEY_MAX_BYTES : SORT_KEY_MAX_BYTES)]).toEqual([name, true]);
        for (const q of placeQueriesOf(placeOf(location))) {
          const scope = feedScopes.place(placeName(q));
          expect(bytes(feedPartition(scope))).toBeLessThanOrEqual(PARTITION_KEY_MAX_BYTES);
          const cursor = await sealSearchCursor({ place: q, from: '2027-03-01', to: '2027-05-31', after: placeSortKey('2027-03-10T18:00:00', `evt_${'x'.repeat(64)}`) }, testKeyring);
          expect(cursor.length).toBeLessThanOrEqual(SEARCH_CURSOR_MAX_LENGTH);
        }
        // The query side makes of the same text what the data side holds (a part of punctuation alone, like "'", is no
        // place on either side: it folds to nothing).
        const held = placeOf(location);
        expect({ city: cityKey(city), country: countryKey(country) }).toEqual({ city: held.city, country: held.country });
      }),
      { numRuns: 300 },
    );
  });
});

describe('the other keys built from data, at the contract\'s maxima', () => {
  it('every table and index key of the longest ids and username is within its limit', () => {
    const userId = `usr_${'u'.repeat(64)}`;
    const eventId = `evt_${'e'.repeat(64)}`;
    const username = 'n'.repeat(64);
    const iso = '2027-03-10T18:00:00.000Z';
    const built = [
      keys.user(userId),
      keys.userEventLink(userId, eventId),
      keys.event(eventId),
      keys.eventSource(eventId),
      keys.rsvpSource(eventId, userId),
      keys.rsvp(eventId, userId),
      keys.profileEntry(eventId, userId),
      keys.guestSeq(eventId, userId),
      keys.guestCount(eventId, userId),
      keys.keyRequest(userId, 'k'.repeat(128)),
      indexKeys.userByName(username),
      indexKeys.eventById(eventId),
      indexKeys.guestOfEvent(eventId, iso, userId),
      indexKeys.guestByStatus(eventId, 'maybe', iso, userId),
      indexKeys.userEvent(username, 'PROFILE', iso, eventId),
      indexKeys.userEventByCreation(username, 'PROFILE', iso, eventId),
      memberKey(feedScopes.host(userId), eventId),
      memberKey(feedScopes.guests(eventId), userId),
    ];
    const over = built.flatMap((k) => Object.entries(k)).filter(([name, value]) => bytes(String(value)) > (/sk$/.test(name) ? SORT_KEY_MAX_BYTES : PARTITION_KEY_MAX_BYTES));
    expect(over).toEqual([]);
    expect(TEXT_MAX.locationPart).toBe(100);
  });
});

describe('on the store: a maximal place is applied, found and moved', () => {
  const PART = '\uFDFA'.repeat(33);
  const OTHER = '\uFDFB'.repeat(33);
  const EVENT: SourceEvent = placeEvent('evt_long_place', '2027-03-10T18:00:00.000Z', 'UTC', PART, PART);
  let store: TestStore;
  beforeAll(async () => {
    const demo: Dataset = demoDataset();
    store = await startTestStore(demo);
  });
  afterAll(async () => store?.close());

  const found = async (city: string, country?: string) =>
    (await store.repository.searchEvents({ place: { city: cityKey(city)!, ...(country ? { country: countryKey(country)! } : {}) }, from: '2027-03-01', to: '2027-03-31', limit: 10 })).events.map((e) => e.event_id);

  it('the change path writes it (DynamoDB refused its index keys before), the search finds it, a move takes it to the other place', async () => {
    const applier = new ChangeApplier(store.client, store.tableName, { clock: fixedClock('2027-03-01T12:00:00.000Z') });
    expect(await applier.apply({ type: 'event.upserted', version: 1, event: EVENT })).toMatchObject({ result: 'applied' });
    expect(await found(PART)).toEqual([EVENT.id]);
    expect(await found(PART, PART)).toEqual([EVENT.id]);
    expect(await applier.apply({ type: 'event.upserted', version: 2, event: { ...EVENT, location: { name: 'Hall', city: OTHER, country: OTHER } } })).toMatchObject({ result: 'applied' });
    expect([await found(PART), await found(OTHER, OTHER)]).toEqual([[], [EVENT.id]]);
  });
});
