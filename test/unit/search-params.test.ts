/**
 * Discovery's parameters and their defaults (lambdas/core/search-params.ts):
 * today's date is a default of the first page only. A cursor carries the
 * window it was made for, so no clock reading between two pages (UTC
 * midnight passing, a day, a month) refuses a query that is the cursor's
 * own (issue 59, d4: test/integration/d4-cursor-to-across-midnight.test.ts).
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { testKeyring } from '../support/feed-keys.js';
import { searchPage } from '../../lambdas/core/search-events.js';
import { sealSearchCursor } from '../../lambdas/core/search-cursor.js';
import { addDays, resolveSearch, searchEventsParams, SEARCH_WINDOW_MAX_DAYS } from '../../lambdas/core/search-params.js';
import type { EventSearcher } from '../../lambdas/core/ports.js';

const DAY_MS = 86_400_000;
const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('a walk by cursor goes on whatever the clock reads between its pages (property)', () => {
  it('the same query with its next_cursor is answered with the cursor\'s window, never a 400 on `from` or `to`', async () => {
    const T0 = Date.parse('2026-01-01T00:00:00.000Z');
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 3 * 365 }).map((d) => T0 + d * DAY_MS),
        fc.integer({ min: 0, max: DAY_MS - 1 }),
        // Between pages: a minute to 200 days later.
        fc.integer({ min: 60_000, max: 200 * DAY_MS }),
        fc.option(fc.integer({ min: 0, max: SEARCH_WINDOW_MAX_DAYS }), { nil: undefined }),
        async (day, timeOfDay, later, toDays) => {
          const first = new Date(day + timeOfDay);
          const query: Record<string, string> = { city: 'Lisbon', ...(toDays !== undefined ? { to: addDays(date(first.getTime()), toDays) } : {}) };
          const req = resolveSearch(searchEventsParams.parse(query), first);
          const cursor = await sealSearchCursor({ place: req.place, from: req.from, to: req.to, after: `${req.from}T12:00:00#evt_x` }, testKeyring);
          const next = resolveSearch(searchEventsParams.parse({ ...query, cursor }), new Date(first.getTime() + later));
          const windows: { from: string; to: string }[] = [];
          const search: EventSearcher = {
            searchEvents: async (q) => {
              windows.push({ from: q.from, to: q.to });
              return { events: [] };
            },
          };
          await searchPage({ search, keyring: testKeyring }, next);
          expect(windows).toEqual([{ from: req.from, to: req.to }]);
        },
      ),
    );
  });
});

describe('a first page is still judged against today', () => {
  it('a stated `to` before the defaulted `from` (today) is a 400 naming `to`', () => {
    expect(() => resolveSearch(searchEventsParams.parse({ city: 'Lisbon', to: '2026-11-21' }), new Date('2026-11-22T00:01:00.000Z'))).toThrow(
      expect.objectContaining({ errors: [{ field: 'to', message: 'to must not be before from' }] }) as unknown as Error,
    );
  });
});
