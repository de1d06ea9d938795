/**
 * One process's tally traffic (lambdas/store/changes/tally-traffic.ts): what
 * the recount rule needs of it, over every order in which requests, starts
 * and ends of recounts can come (fast-check's scheduler):
 *
 * - every request is answered by a recount that began after it was made
 *   (its ticket, taken at the start, comes after the requester's change);
 * - recounts of one summary never overlap, and a request never waits for
 *   more than the one running and the one it joins;
 * - a recount's failure reaches exactly those who joined it, and the next
 *   request starts a new one;
 * - a summary is busy while held or recounted, and free again after.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { TallyTraffic } from '../../lambdas/store/changes/tally-traffic.js';

const summary = (n: number) => ({ pk: 'TALLY#D#USER#ann#HOSTED', sk: `D#2027-03-0${n}` });

describe('tally traffic', () => {
  it('answers each request with a recount begun after it, one at a time per summary, failures to their joiners only', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(fc.tuple(fc.integer({ min: 1, max: 2 }), fc.boolean()), { minLength: 1, maxLength: 8 }), async (s, requests) => {
        const traffic = new TallyTraffic();
        let clock = 0;
        const running = new Map<number, number>();
        const started: { n: number; at: number; fails: boolean }[] = [];
        const outcomes = requests.map(async ([n, fails], i) => {
          // Each request arrives at a point the scheduler picks.
          await s.schedule(Promise.resolve(), `request ${i}`);
          const asked = ++clock;
          try {
            await traffic.recount(summary(n), async () => {
              expect(running.get(n) ?? 0).toBe(0);
              running.set(n, 1);
              started.push({ n, at: ++clock, fails });
              await s.schedule(Promise.resolve(), `recount ${i}`);
              running.set(n, 0);
              if (fails) throw new Error(`recount ${i} failed`);
            });
            return { n, asked, ok: true };
          } catch {
            return { n, asked, ok: false };
          }
        });
        const results = await s.waitFor(Promise.all(outcomes));
        for (const r of results) {
          // Its answer is the first recount of its summary to start (to take its ticket) after it asked, and it
          // fails exactly when that one failed.
          const answer = started.find((st) => st.n === r.n && st.at > r.asked);
          expect(answer).toBeDefined();
          expect(r.ok).toBe(!answer!.fails);
        }
        // At most one recount per request, fewer when requests joined.
        expect(started.length).toBeLessThanOrEqual(requests.length);
        // Nothing stays busy.
        expect(traffic.busy([summary(1), summary(2)])).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('joins a waiting recount; a failure reaches its joiners, and the next request starts afresh', async () => {
    const traffic = new TallyTraffic();
    let release!: () => void;
    const first = traffic.recount(summary(1), () => new Promise<void>((r) => (release = r)));
    await Promise.resolve();
    await Promise.resolve();
    let runs = 0;
    const joined = [1, 2, 3].map(() =>
      traffic.recount(summary(1), async () => {
        runs++;
        throw new Error('throttled');
      }),
    );
    expect(traffic.busy([summary(1)])).toBe(true);
    expect(traffic.busy([summary(2)])).toBe(false);
    release();
    await first;
    for (const j of joined) await expect(j).rejects.toThrow('throttled');
    expect(runs).toBe(1);
    await traffic.recount(summary(1), async () => void runs++);
    expect(runs).toBe(2);
    expect(traffic.busy([summary(1)])).toBe(false);
  });

  it('is busy while held, free once every holder released; releasing twice does nothing', () => {
    const traffic = new TallyTraffic();
    const a = traffic.hold([summary(1), summary(2)]);
    const b = traffic.hold([summary(2)]);
    a();
    a();
    expect(traffic.busy([summary(1)])).toBe(false);
    expect(traffic.busy([summary(2)])).toBe(true);
    b();
    expect(traffic.busy([summary(2)])).toBe(false);
  });

  it('is one per client and table', () => {
    const client = {};
    expect(TallyTraffic.of(client, 't')).toBe(TallyTraffic.of(client, 't'));
    expect(TallyTraffic.of(client, 't')).not.toBe(TallyTraffic.of(client, 'u'));
    expect(TallyTraffic.of({}, 't')).not.toBe(TallyTraffic.of(client, 't'));
  });
});
