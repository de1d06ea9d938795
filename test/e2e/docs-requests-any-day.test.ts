/**
 * The pages' requests answer on any day what they answer in the demo's own
 * week (issue 61, item 2): `npm start` moves the demo's dates by whole weeks
 * to the clock's week (local/demo-dates.ts), and the pages ask for today as
 * `TODAY=$(date -u +%F)`, so a reader who follows a page a week, a year or a
 * daylight-saving change later gets the statuses, messages and events it was
 * written with. Each run is the real local server over HTTP on the demo,
 * its dates following its clock, pinned (injected, never the wall clock's)
 * at the tests' NOW moved by k weeks: the same weekday and hour of another
 * week. Every answer also matches its surface's OpenAPI document
 * (test/support/http.ts).
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { fixedClock } from '../../lambdas/core/clock.js';
import { DEMO_ANCHOR, demoWeeks } from '../../local/demo-dates.js';
import { get, type Reply } from '../support/http.js';
import { NOW } from '../support/fixtures.js';
import { startTestServer } from '../support/local.js';
import { asRequest, shownCommands, TODAY_COMMAND } from '../support/shown-commands.js';

const WEEK_MS = 7 * 86_400_000;
const shown = shownCommands().filter((c) => c.command.startsWith('curl ') && !c.command.includes('--aws-sigv4'));

interface Answer {
  request: string;
  status: number;
  message: unknown;
  /** The ids the answer lists, in its order (an event's, its guests', its host's; a calendar's UIDs). */
  ids: string[];
}

function idsOf(reply: Reply<unknown>): string[] {
  if (reply.body === undefined) return [...reply.text.matchAll(/^UID:(.*?)\r?$/gm)].map((m) => m[1] as string);
  const ids: string[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') {
      for (const [key, v] of Object.entries(value)) {
        if (key === 'id' && typeof v === 'string') ids.push(v);
        else walk(v);
      }
    }
  };
  walk(reply.body);
  return ids;
}

/** Every page request on a demo whose dates follow a clock pinned at `now`. */
async function answersAt(now: Date): Promise<Answer[]> {
  const server = await startTestServer({ clock: fixedClock(now.toISOString()), demoDates: 'follow-clock' });
  try {
    expect(server.demoWeeksMoved).toBe(demoWeeks(now));
    const answers: Answer[] = [];
    for (const command of shown) {
      const request = asRequest(command, now);
      const reply = await get<unknown>(request.url.replace('http://127.0.0.1:3000', server.url), request.headers);
      const message = (reply.body as { message?: unknown } | undefined)?.message;
      answers.push({ request: `${command.page}: ${command.command}`, status: reply.status, message, ids: idsOf(reply) });
    }
    return answers;
  } finally {
    await server.close();
  }
}

const weeksOn = (k: number) => new Date(Date.parse(NOW) + k * WEEK_MS);

let anchored: Answer[] | undefined;
const atAnchor = async () => (anchored ??= await answersAt(new Date(NOW)));

describe("the pages' requests on a demo whose dates follow the clock", () => {
  it("ask for today's date where they ask for a day (TODAY=$(date -u +%F)), and the tests' clock is in the demo's own week", () => {
    expect(shown.filter((c) => Object.values(c.vars).includes(TODAY_COMMAND)).length).toBeGreaterThanOrEqual(4);
    // No request names a day of its own: a literal date would age as the demo's dates move.
    for (const c of shown) expect({ request: c.command, literalDate: /\b\d{4}-\d{2}-\d{2}\b/.test(c.command) }).toEqual({ request: c.command, literalDate: false });
    expect(demoWeeks(new Date(NOW))).toBe(0);
    expect(Date.parse(NOW) - Date.parse(DEMO_ANCHOR)).toBeLessThan(WEEK_MS);
  });

  it('at the anchor, list events where the pages say they do', async () => {
    const answers = await atAnchor();
    const listing = answers.filter((a) => a.status === 200 && a.ids.length > 0);
    expect(listing.length).toBeGreaterThanOrEqual(10);
    // The Lisbon example lists the demo's Lisbon weekend; the Amsterdam ones list what they are limited to.
    expect(answers.filter((a) => a.request.includes('city=Lisbon')).flatMap((a) => a.ids)).toEqual(expect.arrayContaining(['evt_lisbon_fado', 'evt_lisbon_market']));
  }, 120_000);

  // A week on, five, a year (52 weeks: the weekday kept, the date not), and the two weeks in 2027 whose Sunday
  // moves Europe's clocks (18 weeks on: 28 March, summer time; 49 weeks on: 31 October, back to winter time).
  it.each([1, 5, 18, 49, 52, -3])('%i weeks on: the same statuses, messages and events as at the anchor', async (k) => {
    const expected = await atAnchor();
    const answers = await answersAt(weeksOn(k));
    expect(answers).toEqual(expected);
  }, 120_000);

  it('any week on or back, the same statuses, messages and events as at the anchor (property)', async () => {
    const expected = await atAnchor();
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: -520, max: 1040 }), async (k) => {
        expect(await answersAt(weeksOn(k))).toEqual(expected);
      }),
      { numRuns: 3 },
    );
  }, 240_000);

  it('at an arbitrary instant, every request answers the status it answers at the anchor (property)', async () => {
    const expected = (await atAnchor()).map(({ request, status }) => ({ request, status }));
    await fc.assert(
      fc.asyncProperty(fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2045-12-31T23:59:59Z'), noInvalidDate: true }), async (now) => {
        const answers = await answersAt(now);
        expect(answers.map(({ request, status }) => ({ request, status }))).toEqual(expected);
      }),
      { numRuns: 3 },
    );
  }, 240_000);
});
