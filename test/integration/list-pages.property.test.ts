/**
 * The paginated lists read O(page) (the page from an index, the total from the
 * list's tally) and must answer exactly what reading the whole start window
 * and sorting it answers. Held with random histories applied through the
 * change path (so the tallies are the ones the applier keeps, moves across
 * days, months and years included), random clocks (on event starts exactly,
 * too), random windows, limits and offsets, and ties in start and creation
 * times. The whole-window reader is the list read the lists used before.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { fixedClock } from '../../lambdas/core/clock.js';
import { fold } from '../../lambdas/core/fold.js';
import type { EventType } from '../../lambdas/core/params.js';
import type { EventReader } from '../../lambdas/core/ports.js';
import { timelineEvents, typedUserEvents } from '../../lambdas/core/queries.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { ensureTable } from '../../local/dynalite.js';
import { writeDataset } from '../../local/loader.js';
import { historyArb } from '../support/change-streams.js';
import { useFileStore } from '../support/store.js';

const RUNS = Number(process.env.CHANGE_STREAM_RUNS ?? 30);
const TIMEOUT = 30_000 + RUNS * 1_500;
const SITE = 'https://example.org';
const store = useFileStore();

/** Answers counts and pages by reading the whole window: slow, and obviously right. */
function wholeWindowReader(repo: DynamoRepository): EventReader {
  return {
    getPublicEvent: (id) => repo.getPublicEvent(id),
    getGuests: (id, status, count) => repo.getGuests(id, status, count),
    getGuestCounts: (id) => repo.getGuestCounts(id),
    listUserEvents: (u, list, window, limit, descending) => repo.listUserEvents(u, list, window, limit, descending),
    userExists: (u) => repo.userExists(u),
    countUserEvents: async (u, list, window) => (await repo.listUserEvents(u, list, window)).length,
    pageUserEvents: (u, list, order) => repo.listUserEvents(u, list, order.by === 'start' ? order.window : {}),
  };
}

const outcome = (run: () => Promise<unknown>) =>
  run().then(
    (value) => ({ ok: JSON.stringify(value) }),
    (error: Error) => ({ error: `${error.name}: ${error.message}` }),
  );

const queryArb = fc.record({
  type: fc.constantFrom<EventType | 'upcoming-route' | 'past-route' | undefined>('upcoming', 'past', 'profile', undefined, 'upcoming-route', 'past-route'),
  limit: fc.integer({ min: 1, max: 5 }),
  offset: fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 0, max: 6 }) }, { weight: 1, arbitrary: fc.constant(Number.MAX_SAFE_INTEGER) }),
  // Days from 2026-11-01, spanning the generated starts (about -180 to +360 days).
  since: fc.option(fc.integer({ min: -200, max: 380 }), { nil: undefined }),
  span: fc.option(fc.oneof(fc.integer({ min: 0, max: 400 }), fc.constant(3_000_000)), { nil: undefined }),
});

describe('paginated lists: O(page) reads answer what whole-window reads answer', () => {
  it('for random histories, clocks, windows and pages', async () => {
    await fc.assert(
      fc.asyncProperty(
        historyArb({ maxSteps: 12 }),
        fc.array(queryArb, { minLength: 6, maxLength: 6 }),
        fc.integer({ min: -200, max: 380 }),
        fc.nat(),
        async (h, queries, nowDay, pickStart) => {
          const table = store.nextTable('pages');
          await ensureTable(store.client, table);
          await writeDataset(store.client, table, h.d0);
          const applier = new ChangeApplier(store.client, table, { clock: fixedClock('2026-11-21T12:00:00.000Z') });
          for (const change of h.delivered) await applier.apply(change);

          const final = fold(h.d0, h.delivered).dataset;
          const starts = final.events.map((e) => new Date(e.start_date).toISOString());
          // Now: exactly an event's start half of the time (the >= / < edge), else any instant in the range.
          const now = starts.length && pickStart % 2 ? new Date(starts[pickStart % starts.length]!) : new Date(Date.parse('2026-11-01T00:00:00.000Z') + nowDay * 86_400_000 + (pickStart % 86_400) * 1000);
          const repo = new DynamoRepository(store.client, table);
          const naive = wholeWindowReader(repo);
          const usernames = [...final.users.map((u) => u.username), 'nobody'];

          for (const [i, q] of queries.entries()) {
            const username = usernames[i % usernames.length]!;
            const day = (d: number) => new Date(Date.parse('2026-11-01T00:00:00.000Z') + d * 86_400_000);
            // A span of 3,000,000 days reaches the last millisecond of year 9999, the latest `to` there is.
            const to = (span: number) => (span >= 3_000_000 ? new Date('9999-12-31T23:59:59.999Z') : new Date(day(q.since! + span).getTime() - 1));
            const bounds = { since: q.since === undefined ? undefined : day(q.since), to: q.since === undefined || q.span === undefined ? undefined : to(q.span) };
            const page = { username, limit: q.limit, offset: q.offset, bounds };
            const run = (reader: EventReader) =>
              q.type === 'upcoming-route' || q.type === 'past-route'
                ? timelineEvents(reader, q.type === 'upcoming-route' ? 'upcoming' : 'past', { ...page, bounds: {} }, now, SITE)
                : typedUserEvents(reader, { ...page, type: q.type }, now, SITE);
            expect({ username, q, now: now.toISOString(), answer: await outcome(() => run(repo)) }).toEqual({
              username,
              q,
              now: now.toISOString(),
              answer: await outcome(() => run(naive)),
            });
          }
        },
      ),
      { numRuns: RUNS },
    );
  }, TIMEOUT);

  it('when pages end inside ties of start or creation time (ids break them, ascending)', async () => {
    const table = store.nextTable('pages');
    await ensureTable(store.client, table);
    const at = (h: number) => new Date(Date.parse('2026-11-21T12:00:00.000Z') + h * 3_600_000).toISOString();
    // Ids deliberately not in start order within a tie; three events per instant, past and upcoming, then a
    // series of 40 sharing one start and one creation time (created in one transaction, say).
    const ids = ['evt_m', 'evt_c', 'evt_x', 'evt_a', 'evt_q', 'evt_b', 'evt_z', 'evt_d', 'evt_k', 'evt_e', 'evt_y', 'evt_f'];
    const series = Array.from({ length: 40 }, (_, i) => `evt_s${String((i * 17) % 40).padStart(2, '0')}`);
    const event = (id: string, start: string, created: string) => ({
      id,
      creator_id: 'usr_h',
      title: id,
      start_date: start,
      timezone: 'UTC',
      status: 'published' as const,
      visibility: 'public' as const,
      created_at: created,
    });
    await writeDataset(store.client, table, {
      users: [{ id: 'usr_h', username: 'host' }],
      events: [
        ...ids.map((id, i) => event(id, at([-48, -48, -48, -24, -24, -24, 24, 24, 24, 48, 48, 48][i]!), at(-1000 + Math.floor(i / 4)))),
        ...series.map((id) => event(id, at(-36), at(-999))),
      ],
      rsvps: [],
    });
    // Items read from the indexes by the O(page) reader.
    const counting = createDocumentClient({ endpoint: store.endpoint });
    let indexItemsRead = 0;
    counting.middlewareStack.add(
      (next) => async (args) => {
        const out = await next(args);
        if ((args.input as { IndexName?: string }).IndexName) indexItemsRead += (out.output as { ScannedCount?: number }).ScannedCount ?? 0;
        return out;
      },
      { step: 'initialize', name: 'countIndexReads' },
    );
    const repo = new DynamoRepository(counting, table);
    const naive = wholeWindowReader(repo);
    const now = new Date('2026-11-21T12:00:00.000Z');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom<EventType | undefined>('upcoming', 'past', 'profile', undefined), fc.integer({ min: 1, max: 7 }), fc.integer({ min: 0, max: 60 }), async (type, limit, offset) => {
        const q = { username: 'host', type, limit, offset, bounds: {} };
        indexItemsRead = 0;
        const fast = await outcome(() => typedUserEvents(repo, q, now, SITE));
        // The page and, where it ends inside a tie, the tie's share of it read forwards: never the whole tie.
        expect(indexItemsRead).toBeLessThanOrEqual(2 * (offset + limit) + 1);
        expect(fast).toEqual(await outcome(() => typedUserEvents(naive, q, now, SITE)));
      }),
      { numRuns: 100 },
    );
    counting.destroy();
  }, TIMEOUT);
});
