/**
 * The feed cursor's rules over any cursor (lambdas/core/feed-cursor.ts,
 * lambdas/core/feeds.ts openFor), as properties: any cursor signed by a key
 * the functions hold opens, in the format of now and in the one before key
 * ids (a transition: consumers hold those); any cursor past its lifetime is
 * a 410 on every feed, whatever key signed it and even when no key can be
 * read, before any read; a cursor of another feed is a 400 whatever its
 * age; any edit of a genuine cursor is refused (400 naming
 * `cursor`, or a 410 when the edit made it old: that only says "start
 * again"). The rotations themselves: test/integration/cursor-key-rotation.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ValidationError } from '../../lambdas/core/errors.js';
import { CURSOR_LIFETIME_SECONDS, CURSOR_MAX_LENGTH, FEED_SHARDS, encodeCursor, feedScopes, keyIdOf, openCursor, parseCursor, staticKeyring, type CursorKeyring, type FeedCursor } from '../../lambdas/core/feed-cursor.js';
import { catalogueChanges, CursorExpiredError, guestChanges, hostChanges, placeChanges, type FeedContext } from '../../lambdas/core/feeds.js';
import { cityKey, countryKey, placeName, type PlaceKey } from '../../lambdas/core/place.js';
import type { EventReader, FeedReader } from '../../lambdas/core/ports.js';
import { legacyCursor, unshardedCursor } from '../support/feed-keys.js';

const NOW = new Date('2027-01-15T00:00:00.000Z');
const NOW_SECONDS = NOW.getTime() / 1000;
const SITE = 'https://s.example';
/** The feeds' reads: none is expected (a cursor is checked before any read). */
const noReads = new Proxy({}, { get: () => () => Promise.reject(new Error('no read expected')) }) as unknown as FeedReader & EventReader;
/** A function that could not read its keys at all. */
const noKeys: CursorKeyring = { keys: () => Promise.reject(new Error('no key could be read')), refresh: async () => false };

const id = fc.stringMatching(/^[A-Za-z0-9_-]{1,30}$/);
const key = fc.uint8Array({ minLength: 1, maxLength: 64 });
/** Three distinct keys: the current, the pending and the previous one. */
const held = fc.uniqueArray(key, { minLength: 3, maxLength: 3, selector: (k) => Buffer.from(k).toString('hex') });
/** Any place a query can name (up to the routes' 100 characters a part, any characters), as the routes fold it. */
const placeArb: fc.Arbitrary<PlaceKey> = fc
  .record({ city: fc.option(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 100 }), { nil: undefined }), country: fc.option(fc.oneof(fc.constantFrom('PT', 'pt', 'Portugal', 'ES'), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 100 })), { nil: undefined }) })
  .map(({ city, country }) => ({ ...(countryKey(country) !== undefined ? { country: countryKey(country) } : {}), ...(cityKey(city) !== undefined ? { city: cityKey(city) } : {}) }))
  .filter((p) => p.city !== undefined || p.country !== undefined);
/** The place each place scope the cursors below use was made from: its page needs the place, the cursor names the scope. */
const placeOfScope = new Map<string, PlaceKey>();
const placeScopeArb = placeArb.map((place) => {
  const scope = feedScopes.place(placeName(place));
  placeOfScope.set(scope, place);
  return scope;
});
const cursorAt = (asOf: fc.Arbitrary<number>): fc.Arbitrary<FeedCursor> =>
  fc.record({
    scope: fc.oneof(fc.constant(feedScopes.catalogue()), id.map(feedScopes.host), id.map(feedScopes.guests), placeScopeArb),
    members: fc.option(id, { nil: undefined }),
    // One position per head shard, up to the 12 digits of the store's chunk keys.
    position: fc.array(fc.nat({ max: 999_999_999_999 }), { minLength: FEED_SHARDS, maxLength: FEED_SHARDS }),
    asOf,
  }).map(({ scope, members, position, asOf }) => (members === undefined ? { scope, mode: 'entries', position, after: '', asOf } : { scope, mode: 'members', position, after: members, asOf }));
/** Within its lifetime (and not ahead of the clock). */
const live = cursorAt(fc.integer({ min: NOW_SECONDS - CURSOR_LIFETIME_SECONDS, max: NOW_SECONDS }));
const format = fc.constantFrom('keyed', 'legacy');
const seal = (c: FeedCursor, k: Uint8Array, how: string): string => (how === 'keyed' ? encodeCursor(c, k) : legacyCursor(c, k));

/** The page of the feed the cursor's scope belongs to, read with this keyring. */
function pageOf(c: FeedCursor, text: string, keyring: CursorKeyring): Promise<unknown> {
  const ctx: FeedContext = { feeds: noReads, keyring, now: NOW };
  const req = { cursor: parseCursor(text)!, limit: 100 };
  if (c.scope.startsWith(feedScopes.host(''))) return hostChanges(ctx, { ...req, username: 'someone', variant: 'typed' }, SITE);
  if (c.scope.startsWith(feedScopes.guests(''))) return guestChanges(ctx, noReads, { ...req, eventId: c.scope.slice(feedScopes.guests('').length) });
  const place = placeOfScope.get(c.scope);
  if (place) return placeChanges(ctx, { ...req, place }, SITE);
  return catalogueChanges(ctx, req, SITE);
}

describe('feed cursors, whatever they hold', () => {
  it('a cursor signed by the current, the pending or the previous key opens, in either format', async () => {
    await fc.assert(
      fc.asyncProperty(live, held, fc.integer({ min: 0, max: 2 }), format, async (c, keys, which, how) => {
        const [current, pending, previous] = keys as [Uint8Array, Uint8Array, Uint8Array];
        const text = seal(c, keys[which]!, how);
        expect(await openCursor(parseCursor(text)!, staticKeyring(current, pending, previous))).toEqual(c);
      }),
    );
  });

  it('a cursor past its lifetime is a 410 on its feed whatever key signed it, before any read and without a key', async () => {
    await fc.assert(
      fc.asyncProperty(cursorAt(fc.integer({ min: 0, max: NOW_SECONDS - CURSOR_LIFETIME_SECONDS - 1 })), key, format, async (c, k, how) => {
        const text = seal(c, k, how);
        for (const keyring of [staticKeyring(Buffer.from('the current key')), noKeys]) await expect(pageOf(c, text, keyring)).rejects.toBeInstanceOf(CursorExpiredError);
      }),
    );
  });

  it("a cursor of another feed is a 400 naming cursor whatever its age and key (the caller's mistake, not a start again)", async () => {
    await fc.assert(
      fc.asyncProperty(cursorAt(fc.integer({ min: 0, max: NOW_SECONDS })), key, format, id, placeArb, async (c, k, how, eventId, place) => {
        const text = seal(c, k, how);
        const ctx: FeedContext = { feeds: noReads, keyring: noKeys, now: NOW };
        const req = { cursor: parseCursor(text)!, limit: 100 };
        const others: [boolean, () => Promise<unknown>][] = [
          [c.scope !== feedScopes.catalogue(), () => catalogueChanges(ctx, req, SITE)],
          [!c.scope.startsWith(feedScopes.host('')), () => hostChanges(ctx, { ...req, username: 'someone', variant: 'typed' }, SITE)],
          [c.scope !== feedScopes.guests(eventId), () => guestChanges(ctx, noReads, { ...req, eventId })],
          [c.scope !== feedScopes.place(placeName(place)), () => placeChanges(ctx, { ...req, place }, SITE)],
        ];
        for (const [another, read] of others) if (another) await expect(read()).rejects.toMatchObject({ statusCode: 400, errors: [{ field: 'cursor' }] });
      }),
    );
  });

  it('an edit of a genuine cursor never opens: a 400 naming cursor (or a 410 when the edit made it old), before any read', async () => {
    const alphabet = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.'];
    await fc.assert(
      fc.asyncProperty(live, held, fc.integer({ min: 0, max: 2 }), format, fc.nat(), fc.constantFrom(...alphabet), async (c, keys, which, how, at, char) => {
        const [current, pending, previous] = keys as [Uint8Array, Uint8Array, Uint8Array];
        const keyring = staticKeyring(current, pending, previous);
        const genuine = seal(c, keys[which]!, how);
        const i = at % genuine.length;
        const edited = genuine.slice(0, i) + char + genuine.slice(i + 1);
        fc.pre(edited !== genuine);
        const sealed = parseCursor(edited);
        // Not even a cursor's structure: the route's parameter check answers 400 (lambdas/core/params.ts).
        if (!sealed) return;
        expect(await openCursor(sealed, keyring)).toBeNull();
        const answer = await pageOf(sealed.cursor, edited, keyring).then(
          () => 'opened',
          (error: unknown) => (error instanceof ValidationError ? error.errors.map((e) => e.field).join() : error instanceof CursorExpiredError ? 'expired' : String(error)),
        );
        expect(['cursor', 'expired']).toContain(answer);
      }),
      { numRuns: 300 },
    );
  });

  it('a cursor names its key by an id derived from it, never the key itself', () => {
    fc.assert(
      fc.property(live, key, (c, k) => {
        const text = encodeCursor(c, k);
        expect(parseCursor(text)?.keyId).toBe(keyIdOf(k));
        expect(text.split('.')[1]).toBe(keyIdOf(k));
        // Neither of the key's usual spellings (from 6 bytes, too long to turn up by chance).
        if (k.length >= 6) for (const spelling of ['base64url', 'base64', 'hex'] as const) expect(text.includes(Buffer.from(k).toString(spelling))).toBe(false);
      }),
    );
  });

  it('the longest cursor fits CURSOR_MAX_LENGTH: a start of the longest scope past the longest member id, every shard at 12 digits', () => {
    const c: FeedCursor = { scope: feedScopes.guests('e'.repeat(68)), mode: 'members', position: Array.from({ length: FEED_SHARDS }, () => 999_999_999_999), after: 'u'.repeat(68), asOf: 9_999_999_999 };
    const text = encodeCursor(c, Buffer.from('any key'));
    expect(text.length).toBeLessThanOrEqual(CURSOR_MAX_LENGTH);
    expect(parseCursor(text)?.cursor).toEqual(c);
  });

  it("any place's scope is printable ASCII within a guest feed's longest (75), so its longest cursor fits too; two spellings of a place share it", () => {
    fc.assert(
      fc.property(placeArb, (place) => {
        const scope = feedScopes.place(placeName(place));
        expect(scope.length).toBeLessThanOrEqual(feedScopes.guests('e'.repeat(68)).length);
        expect(scope).toMatch(/^PLACE#[\x20-\x7e]+$/);
        const c: FeedCursor = { scope, mode: 'members', position: Array.from({ length: FEED_SHARDS }, () => 999_999_999_999), after: 'u'.repeat(68), asOf: 9_999_999_999 };
        expect(parseCursor(encodeCursor(c, Buffer.from('any key')))?.cursor).toEqual(c);
      }),
    );
    const lisbon = (city: string, country: string) => feedScopes.place(placeName({ city: cityKey(city), country: countryKey(country) }));
    expect(new Set([lisbon('Lisbon', 'PT'), lisbon(' LISBON ', 'portugal'), lisbon('lisbon', 'PRT')])).toEqual(new Set(['PLACE#PT#lisbon']));
    expect(feedScopes.place(placeName({ city: cityKey('東京') }))).toMatch(/^PLACE#=[A-Za-z0-9_-]{43}$/);
  });

  it('a cursor from before the head shards (one position) is a 410 within its lifetime once its MAC holds, and a 400 when forged', async () => {
    await fc.assert(
      fc.asyncProperty(live, key, format, async (c, k, how) => {
        const text = unshardedCursor({ ...c, position: c.position[0]! }, k, how as 'keyed' | 'legacy');
        expect(parseCursor(text)?.cursor.position).toEqual([]);
        await expect(pageOf(c, text, staticKeyring(k))).rejects.toBeInstanceOf(CursorExpiredError);
        await expect(pageOf(c, text, staticKeyring(Buffer.from('not the key that signed it')))).rejects.toMatchObject({ statusCode: 400, errors: [{ field: 'cursor' }] });
      }),
    );
  });
});
