/**
 * Discovery under change (PRODUCT P17), on both stores: a random dataset and
 * a random change stream (test/support/change-streams.ts, its events put at
 * places and in time zones that their edits move between:
 * test/support/places.ts withPlaces) applied by the change path; then, for
 * random places, windows and page sizes, the pages a consumer reads by
 * following cursors equal the model computed from the fold of the stream
 * (placeMatches and local start dates over the source records), page by
 * page; after every change a few searches hold too; and the table equals
 * the fresh load of the fold, place index keys included.
 *
 * A lagging index: the place index read from the table as it was before
 * some changes and the items from the table after them (the two loaded
 * alike, so their base keys agree); the page still shows only what the
 * current items say is at that place in that window, in order.
 *
 * CHANGE_STREAM_RUNS sets the runs, like the change-stream properties (8 on
 * DynamoDB Local: test/support/dynamodb-local.env.ts).
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { fixedClock } from '../../lambdas/core/clock.js';
import { applyChange, fold, initialState, stateToDataset } from '../../lambdas/core/fold.js';
import type { EventSearcher } from '../../lambdas/core/ports.js';
import { parseSearchCursor } from '../../lambdas/core/search-cursor.js';
import { searchPage } from '../../lambdas/core/search-events.js';
import { addDays } from '../../lambdas/core/search-params.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { localDate } from '../../lambdas/core/local-time.js';
import { placeOf, placeQueriesOf } from '../../lambdas/core/place.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { isPubliclyVisible } from '../../lambdas/store/changes/derive.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { historyArb } from '../support/change-streams.js';
import { testKeyring } from '../support/feed-keys.js';
import { expectedIds, QUERY_POOL, withPlaces, type ModelQuery } from '../support/places.js';
import { freshLoadReadModel, readModel, scanAll } from '../support/read-model.js';
import { useFileStore } from '../support/store.js';

const RUNS = Number(process.env.CHANGE_STREAM_RUNS ?? 30);
/** Time for one property: about a second a run on dynalite, two on DynamoDB Local, with room for a busy machine. */
const TIMEOUT = 60_000 + RUNS * 4_000;
const clock = fixedClock('2026-11-21T12:00:00.000Z');
const store = useFileStore({ inProcess: true, direct: true });

/**
 * A query: mostly aimed at an event of the data (one of its place queries,
 * a window of a few days around its local start date, so that the edges of
 * local dates and the places it moved from are asked about), else a place
 * of the pool and a window anywhere around the generated starts.
 */
const queryArb = fc.record({
  aim: fc.nat(),
  query: fc.nat(2),
  before: fc.integer({ min: 0, max: 2 }),
  after: fc.integer({ min: 0, max: 2 }),
  pool: fc.constantFrom(...QUERY_POOL),
  start: fc.integer({ min: -200, max: 400 }),
  days: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 92 })),
  limit: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 100 })),
});
type Query = ModelQuery & { limit: number };
type RawQuery = typeof queryArb extends fc.Arbitrary<infer T> ? T : never;

/** The query `q` stands for, over the events of `datasets` (its aim: every fourth one asks the pool instead). */
function toQuery(q: RawQuery, ...datasets: Pick<Dataset, 'events'>[]): Query {
  const events = datasets.flatMap((d) => d.events.filter(isPubliclyVisible));
  const aimed = q.aim % 4 !== 0 && events.length ? events[q.aim % events.length]! : undefined;
  const places = aimed ? placeQueriesOf(placeOf(aimed.location)) : [];
  if (aimed && places.length) {
    const day = localDate(Date.parse(aimed.start_date), aimed.timezone);
    return { place: places[q.query % places.length]!, from: addDays(day, -q.before), to: addDays(day, q.after), limit: q.limit };
  }
  const from = addDays('2026-11-01', q.start);
  return { place: q.pool, from, to: addDays(from, q.days), limit: q.limit };
}

/** Every page of a search, following cursors as a consumer does (each cursor through its parser and MAC check). */
async function pages(search: EventSearcher, q: Query): Promise<string[][]> {
  const out: string[][] = [];
  let cursor: string | undefined;
  for (;;) {
    const sealed = cursor === undefined ? undefined : parseSearchCursor(cursor)!;
    const page = await searchPage({ search, keyring: testKeyring }, { place: q.place, from: q.from, to: q.to, stated: { from: q.from, to: q.to }, limit: q.limit, ...(sealed ? { cursor: sealed } : {}) });
    out.push(page.events.map((e) => e.event_id));
    expect(page.pagination.limit).toBe(q.limit);
    if (!page.pagination.has_more) {
      expect(page.pagination.next_cursor).toBeUndefined();
      return out;
    }
    cursor = page.pagination.next_cursor;
    expect(out.length).toBeLessThan(500);
  }
}

/** The pages equal the model: every page full but the last (an up-to-date index has no entry to drop). */
async function expectModel(search: EventSearcher, dataset: Parameters<typeof expectedIds>[0], q: Query): Promise<void> {
  const got = await pages(search, q);
  const expected = expectedIds(dataset, q);
  expect({ q, ids: got.flat() }).toEqual({ q, ids: expected });
  expect(got.slice(0, -1).every((p) => p.length === q.limit)).toBe(true);
}

describe('discovery under a change stream (fast-check)', () => {
  it('paged answers equal the model of the fold, after every change and at the end; the table equals a fresh load', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb().map(withPlaces), fc.array(queryArb, { minLength: 4, maxLength: 10 }), async (h, raw) => {
        const final = fold(h.d0, h.delivered).dataset;
        const queries = raw.map((q) => toQuery(q, h.d0, final));
        const table = await store.loaded('search', h.d0);
        const repo = new DynamoRepository(store.client, table);
        const applier = new ChangeApplier(store.client, table, { clock });
        const state = initialState(h.d0);
        await expectModel(repo, h.d0, queries[0]!);
        for (const [i, change] of h.delivered.entries()) {
          applyChange(state, change);
          await applier.apply(change);
          await expectModel(repo, stateToDataset(state), queries[i % queries.length]!);
        }
        for (const q of queries) await expectModel(repo, final, q);
        expect(readModel(await scanAll(store.client, table))).toEqual(await freshLoadReadModel(store.client, `${table}-fresh`, final));
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);

  it('a lagging index never shows an event that has moved, gone private or been deleted since', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb().map(withPlaces), fc.nat(), fc.array(queryArb, { minLength: 3, maxLength: 8 }), async (h, cut, raw) => {
        const before = h.delivered.slice(0, cut % (h.delivered.length + 1));
        const [old, now] = [await store.loaded('lag-old', h.d0), await store.loaded('lag-now', h.d0)];
        for (const change of before) await new ChangeApplier(store.client, old, { clock }).apply(change);
        for (const change of h.delivered) await new ChangeApplier(store.client, now, { clock }).apply(change);
        const lagging = laggingClient(store.client, old);
        const repo = new DynamoRepository(lagging, now);
        const current = fold(h.d0, h.delivered).dataset;
        const lagged = fold(h.d0, before).dataset;
        for (const q of raw.map((r) => toQuery(r, lagged))) {
          const got = (await pages(repo, q)).flat();
          const allowed = expectedIds(current, q);
          // What shows is in the model, in the model's order, once.
          expect(got.filter((id) => !allowed.includes(id))).toEqual([]);
          expect(got).toEqual(allowed.filter((id) => got.includes(id)));
        }
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);
});

/** A client whose Queries (the place index's) read table `indexTable`, the index as it lagged; everything else goes where it was sent. */
function laggingClient(client: DynamoDBDocumentClient, indexTable: string): DynamoDBDocumentClient {
  const send = (command: unknown) => client.send((command instanceof QueryCommand ? new QueryCommand({ ...command.input, TableName: indexTable }) : command) as QueryCommand);
  return { send } as unknown as DynamoDBDocumentClient;
}
