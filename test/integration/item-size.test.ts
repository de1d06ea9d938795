/**
 * No answer can exceed what Lambda returns, and no table item DynamoDB's
 * 400 KB (docs/data-model.md, "Item sizes"): every free-text field of the
 * contracts has a maximum in the bytes it takes in an answer
 * (lambdas/core/dataset.ts, TEXT_MAX), refused with its field path one byte
 * past it, control characters but newline and tab refused too; records at
 * every maximum, in three-byte characters, go through the change path and
 * the full load with every item under the bound the maxima argue.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Change } from '../../lambdas/core/changes.js';
import { parseChange } from '../../lambdas/core/changes.js';
import { ITEM_TEXT_MAX_BYTES, TEXT_ERRORS, TEXT_MAX, validateDataset, type Dataset, type SourceEvent, type SourceUser } from '../../lambdas/core/dataset.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import { fold } from '../../lambdas/core/fold.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { ensureTable } from '../../local/dynalite.js';
import { itemSize } from '../../scripts/write-billing.js';
import { freshLoadReadModel, readModel, scanAll } from '../support/read-model.js';
import { startLoopbackStore } from '../support/store.js';

/** Three bytes of UTF-8 in one UTF-16 code unit: the most a unit can weigh in an item. */
const WIDE = '語';
/** A text of exactly `bytes` answer bytes, in three-byte characters as far as they go. */
const wide = (bytes: number) => WIDE.repeat(Math.floor(bytes / 3)) + 'a'.repeat(bytes % 3);
const url = (bytes: number) => `https://example.com/${wide(bytes - 'https://example.com/'.length)}`;
const DYNAMODB_ITEM_LIMIT = 400 * 1024;

const user = (id: string, username: string): SourceUser => ({
  id,
  username,
  name: wide(TEXT_MAX.name),
  image: url(TEXT_MAX.url),
  verification_status: 'id_verified',
  email: `${'e'.repeat(TEXT_MAX.email - '@example.com'.length)}@example.com`,
  phone: '9'.repeat(TEXT_MAX.phone),
});
const creator = user(`usr_${'c'.repeat(64)}`, 'h'.repeat(64));
const guest = user(`usr_${'g'.repeat(64)}`, 'g'.repeat(64));
const event: SourceEvent = {
  id: `evt_${'e'.repeat(64)}`,
  creator_id: creator.id,
  title: wide(TEXT_MAX.title),
  description: wide(TEXT_MAX.description),
  cover: url(TEXT_MAX.url),
  location: { name: wide(TEXT_MAX.locationName), city: wide(TEXT_MAX.locationPart), country: wide(TEXT_MAX.locationPart) },
  start_date: '2027-03-01T20:00:00.000Z',
  end_date: '2027-03-01T23:00:00.000Z',
  timezone: wide(TEXT_MAX.timezone),
  status: 'published',
  visibility: 'public',
  cost: 12.5,
  created_at: '2026-11-01T00:00:00.000Z',
  links: { spotify_url: url(TEXT_MAX.url), wavlake_url: url(TEXT_MAX.url) },
  contributions: { cashapp: wide(TEXT_MAX.handle), venmo: wide(TEXT_MAX.handle), paypal: wide(TEXT_MAX.handle), btc_lightning: wide(TEXT_MAX.lightning) },
};
const rsvp = { event_id: event.id, user_id: guest.id, status: 'yes' as const, rsvp_date: '2026-11-02T00:00:00.000Z', name: wide(TEXT_MAX.name), email: guest.email, phone: guest.phone };

/** Every free-text field of the contracts, by where it sits in a change record, with its maximum. */
const FIELDS: [Change['type'], string[], number][] = [
  ['user.upserted', ['user', 'name'], TEXT_MAX.name],
  ['user.upserted', ['user', 'image'], TEXT_MAX.url],
  ['user.upserted', ['user', 'email'], TEXT_MAX.email],
  ['user.upserted', ['user', 'phone'], TEXT_MAX.phone],
  ['event.upserted', ['event', 'creator_id'], TEXT_MAX.reference],
  ['event.upserted', ['event', 'title'], TEXT_MAX.title],
  ['event.upserted', ['event', 'description'], TEXT_MAX.description],
  ['event.upserted', ['event', 'cover'], TEXT_MAX.url],
  ['event.upserted', ['event', 'location', 'name'], TEXT_MAX.locationName],
  ['event.upserted', ['event', 'location', 'city'], TEXT_MAX.locationPart],
  ['event.upserted', ['event', 'location', 'country'], TEXT_MAX.locationPart],
  ['event.upserted', ['event', 'timezone'], TEXT_MAX.timezone],
  ['event.upserted', ['event', 'links', 'spotify_url'], TEXT_MAX.url],
  ['event.upserted', ['event', 'links', 'wavlake_url'], TEXT_MAX.url],
  ['event.upserted', ['event', 'contributions', 'cashapp'], TEXT_MAX.handle],
  ['event.upserted', ['event', 'contributions', 'venmo'], TEXT_MAX.handle],
  ['event.upserted', ['event', 'contributions', 'paypal'], TEXT_MAX.handle],
  ['event.upserted', ['event', 'contributions', 'btc_lightning'], TEXT_MAX.lightning],
  ['rsvp.upserted', ['rsvp', 'event_id'], TEXT_MAX.reference],
  ['rsvp.upserted', ['rsvp', 'user_id'], TEXT_MAX.reference],
  ['rsvp.upserted', ['rsvp', 'name'], TEXT_MAX.name],
  ['rsvp.upserted', ['rsvp', 'email'], TEXT_MAX.email],
  ['rsvp.upserted', ['rsvp', 'phone'], TEXT_MAX.phone],
  ['rsvp.deleted', ['event_id'], TEXT_MAX.reference],
  ['rsvp.deleted', ['user_id'], TEXT_MAX.reference],
];

const maximal: Record<Change['type'], Change> = {
  'user.upserted': { type: 'user.upserted', version: 1, user: creator },
  'user.deleted': { type: 'user.deleted', version: 2, user_id: creator.id },
  'event.upserted': { type: 'event.upserted', version: 1, event },
  'event.deleted': { type: 'event.deleted', version: 2, event_id: event.id },
  'rsvp.upserted': { type: 'rsvp.upserted', version: 1, rsvp },
  'rsvp.deleted': { type: 'rsvp.deleted', version: 2, event_id: event.id, user_id: guest.id },
};

/** The record with the field at `path` set to a string of `length` units (a URL stays a URL). */
function withLength(change: Change, path: string[], length: number): unknown {
  const copy = structuredClone(change) as unknown as Record<string, unknown>;
  let at = copy;
  for (const p of path.slice(0, -1)) at = at[p] as Record<string, unknown>;
  const last = path[path.length - 1]!;
  at[last] = /url|image|cover/.test(last) ? url(length) : wide(length);
  return copy;
}

describe('every free-text field has a maximum in answer bytes, refused with its path', () => {
  it.each(FIELDS)('%s %j: accepted at %i bytes, refused one past it', (type, path, max) => {
    expect(parseChange(withLength(maximal[type], path, max))).toMatchObject({ ok: true });
    expect(parseChange(withLength(maximal[type], path, max + 1))).toEqual({ ok: false, problems: [`${path.join('.')}: ${TEXT_ERRORS.tooLong(max)}`] });
  });

  it('a quote or backslash counts 4 bytes, a newline or tab 3, a four-byte character 4; other control characters and unpaired surrogates are refused', () => {
    const title = (t: string) => parseChange({ ...maximal['event.upserted'], event: { ...event, title: t } });
    const refused = (message: string) => ({ ok: false, problems: [`event.title: ${message}`] });
    expect(title('"'.repeat(50))).toMatchObject({ ok: true });
    expect(title('"'.repeat(51))).toEqual(refused(TEXT_ERRORS.tooLong(TEXT_MAX.title)));
    expect(title('\\'.repeat(50))).toMatchObject({ ok: true });
    expect(title('\\'.repeat(51))).toEqual(refused(TEXT_ERRORS.tooLong(TEXT_MAX.title)));
    expect(title('\n'.repeat(66))).toMatchObject({ ok: true });
    expect(title('\t'.repeat(67))).toEqual(refused(TEXT_ERRORS.tooLong(TEXT_MAX.title)));
    expect(title('🎷'.repeat(50))).toMatchObject({ ok: true });
    expect(title('🎷'.repeat(51))).toEqual(refused(TEXT_ERRORS.tooLong(TEXT_MAX.title)));
    for (const c of ['\u0000', '\u0007', '\r', '\u001b', '\u007f', '\u0085']) expect({ c, out: title(`Jazz${c}night`) }).toEqual({ c, out: refused(TEXT_ERRORS.control) });
    expect(title('Jazz\ud800night')).toEqual(refused(TEXT_ERRORS.unpaired));
    expect(title('Jazz\udc00')).toEqual(refused(TEXT_ERRORS.unpaired));
  });

  it('the dataset contract refuses the same, by record and field', () => {
    const d = { users: [creator], events: [{ ...event, title: wide(TEXT_MAX.title + 1) }] };
    expect(validateDataset(d)).toEqual({ ok: false, problems: [`events[0].title: ${TEXT_ERRORS.tooLong(TEXT_MAX.title)}`] });
    const d2 = { users: [creator], events: [{ ...event, description: 'a\u0001b' }] };
    expect(validateDataset(d2)).toEqual({ ok: false, problems: [`events[0].description: ${TEXT_ERRORS.control}`] });
    const key = { key: 'k'.repeat(TEXT_MAX.key), user_id: creator.id, name: wide(TEXT_MAX.keyName) };
    expect(validateDataset({ users: [creator], events: [], api_keys: [{ ...key, name: wide(TEXT_MAX.keyName + 1) }] })).toEqual({ ok: false, problems: [`api_keys[0].name: ${TEXT_ERRORS.tooLong(TEXT_MAX.keyName)}`] });
    expect(validateDataset({ users: [creator, guest], events: [event], rsvps: [rsvp], api_keys: [key] })).toMatchObject({ ok: true });
  });
});

describe('records at every maximum fit in any item', () => {
  let store: Awaited<ReturnType<typeof startLoopbackStore>>;
  beforeAll(async () => {
    store = await startLoopbackStore();
  });
  afterAll(async () => store?.close());

  it('the change path and the full load store them, every item within the argued bound (its text bytes, plus keys and names)', async () => {
    const changes: Change[] = [maximal['user.upserted'], { type: 'user.upserted', version: 1, user: guest }, maximal['event.upserted'], maximal['rsvp.upserted']];
    await ensureTable(store.client, 'sizes');
    const applier = new ChangeApplier(store.client, 'sizes', { clock: fixedClock('2026-11-21T12:00:00.000Z') });
    for (const c of changes) expect(await applier.apply(c)).toMatchObject({ result: 'applied' });
    const items = await scanAll(store.client, 'sizes');
    // The full load writes the same items (freshLoadReadModel loads the fold into a table of its own).
    const d0: Dataset = { users: [], events: [] };
    expect(readModel(items)).toEqual(await freshLoadReadModel(store.client, 'sizes-load', fold(d0, changes).dataset));

    const largest = Math.max(...items.map((i) => itemSize(i)));
    const bound = ITEM_TEXT_MAX_BYTES + 4 * 1024; // text, plus 4 KB for keys, dates, numbers and attribute names
    expect(largest).toBeGreaterThan(TEXT_MAX.description + TEXT_MAX.title); // the maximal event is really stored
    expect(largest).toBeLessThanOrEqual(bound);
    expect(bound).toBeLessThan(DYNAMODB_ITEM_LIMIT / 10);
  });
});
