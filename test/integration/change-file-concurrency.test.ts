/**
 * `data:apply --concurrency N` (local/change-file.ts): a file applied N lines
 * at once gives what applying it in file order gives, line by line (every
 * line's result, so every count and every stale or waiting line reported)
 * and in the table's read model, for random streams of changes with
 * duplicates, stale replays, deletions, re-creations and references to
 * entities that earlier lines create or delete.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { fixedClock } from '../../lambdas/core/clock.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { applyChangeFile, lineKeys } from '../../local/change-file.js';
import { historyArb } from '../support/change-streams.js';
import { readModel, scanAll } from '../support/read-model.js';
import { useFileStore } from '../support/store.js';
import { ThrottleWindow, toPartition } from '../support/throttle-window.js';

const RUNS = Number(process.env.CHANGE_STREAM_RUNS ?? 15);
const clock = fixedClock('2026-11-21T12:00:00.000Z');
const store = useFileStore({ inProcess: true, direct: true });

describe('data:apply --concurrency (fast-check, dynalite)', () => {
  it('N lines at once give the results, counts and read model of the file in order', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb(), fc.integer({ min: 2, max: 8 }), fc.array(fc.nat(40), { minLength: 1, maxLength: 20 }), async (h, n, delays) => {
        const text = h.delivered.map((c) => JSON.stringify(c)).join('\n');
        const inOrder = await store.loaded('file-order', h.d0);
        const atOnce = await store.loaded('file-at-once', h.d0);
        const expected = await applyChangeFile(() => new ChangeApplier(store.client, inOrder, { clock }), text);
        // Each line's start held back by its own number of event-loop turns: a line may start before an earlier one.
        let line = 0;
        const late = () => {
          const turns = delays[line++ % delays.length]!;
          const applier = new ChangeApplier(store.client, atOnce, { clock });
          return {
            apply: async (change: Parameters<ChangeApplier['apply']>[0]) => {
              for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
              return applier.apply(change);
            },
          };
        };
        const got = await applyChangeFile(late, text, n);
        const { writes: _w1, ...expectedLines } = expected;
        const { writes: _w2, ...gotLines } = got;
        expect(gotLines).toEqual(expectedLines);
        expect(readModel(await scanAll(store.client, atOnce))).toEqual(readModel(await scanAll(store.client, inOrder)));
      }),
      { numRuns: RUNS },
    );
  }, 60_000 + RUNS * 2_000);

  it('a user deletion waits for every earlier line and holds back every later one; an RSVP reads its event and user', () => {
    expect(lineKeys({ type: 'user.deleted', version: 1, user_id: 'usr_a' }).barrier).toBe(true);
    expect(lineKeys({ type: 'rsvp.deleted', version: 1, event_id: 'evt_a', user_id: 'usr_a' })).toEqual({ writes: ['rsvp evt_a/usr_a'], reads: ['event evt_a', 'user usr_a'], barrier: false });
  });

  it('a file applied while a partition throttles for a stretch of calls: each refused line comes back after its backoff, the order kept, the table what the file in order gives', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb(), fc.integer({ min: 1, max: 4 }), fc.constantFrom('EVENT#', 'USER#', 'FEED#'), fc.integer({ min: 1, max: 16 }), async (h, n, kind, calls) => {
        const text = h.delivered.map((c) => JSON.stringify(c)).join('\n');
        const inOrder = await store.loaded('file-order', h.d0);
        const throttled = await store.loaded('file-throttled', h.d0);
        const expected = await applyChangeFile(() => new ChangeApplier(store.client, inOrder, { clock }), text);
        // At most 16 failed calls: each delivery of a line meets the window at least once, and a line is delivered 17 times
        // at most (the ingest queue's maxReceiveCount) before its error is the file's.
        const window = new ThrottleWindow(toPartition(kind));
        window.open(calls);
        const client = window.attach(store.newClient());
        const slept: number[] = [];
        try {
          const got = await applyChangeFile(() => new ChangeApplier(client, throttled, { clock }), text, n, { sleep: async (ms) => void slept.push(ms), random: () => 0 });
          const { writes: _w1, throttledRetries: _r1, ...expectedLines } = expected;
          const { writes: _w2, throttledRetries, ...gotLines } = got;
          expect(gotLines).toEqual(expectedLines);
          // Every refused call was a line applied again after a backoff (a line may meet the window more than once).
          expect(throttledRetries).toBe(slept.length);
          expect(slept.every((ms) => ms >= 1000)).toBe(true);
          if (window.failed > 0) expect(throttledRetries).toBeGreaterThan(0);
        } finally {
          client.destroy();
        }
        expect(readModel(await scanAll(store.client, throttled))).toEqual(readModel(await scanAll(store.client, inOrder)));
      }),
      { numRuns: Math.max(4, Math.floor(RUNS / 2)) },
    );
  }, 60_000 + RUNS * 2_000);

  it('refuses a concurrency below 1', async () => {
    await expect(applyChangeFile(() => new ChangeApplier(store.client, 'unused', { clock }), '', 0)).rejects.toThrow('concurrency');
  });
});
