/**
 * What calendar clients need of an event's history (issue 61 item 3), held
 * over the change streams of P14's property (change-stream.property.test.ts:
 * duplicates, stale replays, swaps, deletions with cascades, renames, hides),
 * against the real table. After every change the table's event items are
 * rendered as the `.ics` routes render them (toICalendar) and read back with
 * a real parser (ical.js), and from one read to the next:
 *
 * - an event's SEQUENCE never decreases, nor its LAST-MODIFIED, even across
 *   its deletion and return;
 * - when what a calendar shows of it changed, SEQUENCE and LAST-MODIFIED both
 *   went up; when nothing shown changed, neither moved;
 * - DTSTAMP is LAST-MODIFIED, and SEQUENCE stays an iCalendar INTEGER,
 *   counting revisions, never taking the versions (here millisecond
 *   timestamps, past 31 bits).
 *
 * The streams are the P14 property's, with four adversaries added: versions
 * that are millisecond timestamps, edits that change nothing a calendar
 * shows (cost, cover, a control character in the title, the zone of an event
 * with an end), deleted events that come back, and an applier clock that
 * jumps back and forth and repeats seconds. Some changes are first sent to an applier that dies after a few
 * calls, then redelivered: a crash never counts a revision twice.
 * CHANGE_STREAM_RUNS sets the number of runs (30; 8 on DynamoDB Local).
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import ICAL from 'ical.js';
import type { Change } from '../../lambdas/core/changes.js';
import { SEQUENCE_MAX } from '../../lambdas/core/calendar-revision.js';
import { toICalendar } from '../../lambdas/core/ical.js';
import type { EventPayload } from '../../lambdas/core/read-items.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { historyArb, type History } from '../support/change-streams.js';
import { applyUntilCrash } from '../support/crash.js';
import { scanAll } from '../support/read-model.js';
import { useFileStore } from '../support/store.js';

const RUNS = Number(process.env.CHANGE_STREAM_RUNS ?? 30);
const TIMEOUT = 30_000 + RUNS * 1_500;
const SITE = 'https://events.example';
/** Versions as a source that stamps them with its clock would send them: milliseconds since 1970. */
const EPOCH_VERSIONS = Date.parse('2026-11-01T00:00:00.000Z');
const CLOCK_START = Date.parse('2026-11-21T12:00:00.000Z');
const store = useFileStore({ inProcess: true, direct: true });

/** An event's entry as a calendar reads it: what it shows (everything but its history), and its history. */
interface Entry {
  shown: string;
  sequence: number;
  lastModified: string;
  stamp: string;
}

function entryOf(item: EventPayload): Entry {
  const vevent = new ICAL.Component(ICAL.parse(toICalendar([item], { name: 'x', siteUrl: SITE }))).getFirstSubcomponent('vevent')!;
  const history = new Set(['sequence', 'last-modified', 'dtstamp']);
  const shown = vevent.getAllProperties().filter((p) => !history.has(p.name)).map((p) => [p.name, p.toICALString()]);
  const time = (name: string) => (vevent.getFirstPropertyValue(name) as ICAL.Time).toJSDate().toISOString();
  return { shown: JSON.stringify(shown), sequence: Number(vevent.getFirstPropertyValue('sequence')), lastModified: time('last-modified'), stamp: time('dtstamp') };
}

async function entries(table: string): Promise<Map<string, Entry>> {
  const items = (await scanAll(store.client, table)).filter((i) => i.type === 'EVENT') as unknown as EventPayload[];
  return new Map(items.map((i) => [i.event_id, entryOf(i)]));
}

/** What a source sends that a calendar does not show: a new cost, a cover, a control character in the title, another zone for an event with an end. */
function unseenEdit(change: Extract<Change, { type: 'event.upserted' }>, kind: number): Change {
  const e = change.event;
  const edits = [
    { cost: (e.cost ?? 0) + 5 },
    { cover: e.cover ? null : 'https://img.example/cover.png' },
    { title: `${e.title}\u0007` },
    e.end_date ? { timezone: e.timezone === 'Asia/Tokyo' ? 'Europe/Lisbon' : 'Asia/Tokyo' } : { cost: (e.cost ?? 0) + 1 },
  ];
  return { ...change, version: change.version + 1, event: { ...e, ...edits[kind % edits.length] } };
}

/**
 * The P14 streams with timestamp versions, an unseen edit after some event
 * upserts, and some deleted events coming back (the last upsert of theirs
 * again, after the deletion): the versions leave room for both.
 */
function withAdversaries(h: History, unseen: readonly number[], returns: readonly boolean[]): Change[] {
  const out: Change[] = [];
  const lastUpsert = new Map<string, Extract<Change, { type: 'event.upserted' }>>();
  h.delivered.forEach((c, i) => {
    const change = { ...c, version: EPOCH_VERSIONS + c.version * 1_000 } as Change;
    out.push(change);
    const kind = unseen[i % unseen.length]!;
    if (change.type === 'event.upserted') {
      lastUpsert.set(change.event.id, change);
      if (kind >= 0) out.push(unseenEdit(change, kind));
    }
    const back = change.type === 'event.deleted' ? lastUpsert.get(change.event_id) : undefined;
    if (back && returns[i % returns.length]) out.push({ ...back, version: change.version + 2 });
  });
  return out;
}

describe("an event's calendar history across change streams (fast-check)", () => {
  it('SEQUENCE and LAST-MODIFIED never go back, go up together when a calendar shows a change, and stay put otherwise', async () => {
    await fc.assert(
      fc.asyncProperty(
        historyArb(),
        fc.array(fc.integer({ min: -2, max: 3 }), { minLength: 1, maxLength: 10 }),
        fc.array(fc.integer({ min: -90_000, max: 90_000 }), { minLength: 1, maxLength: 10 }),
        fc.array(fc.integer({ min: 0, max: 12 }), { minLength: 1, maxLength: 10 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
        async (h, unseen, clockSteps, crashes, returns) => {
          const table = await store.loaded('calendar', h.d0);
          let now = CLOCK_START;
          const opts = { clock: () => new Date(now), fanOutConcurrency: 1 };
          const applier = new ChangeApplier(store.client, table, opts);
          const last = new Map<string, Entry>(await entries(table));
          let before = new Map(last);
          const stream = withAdversaries(h, unseen, returns);
          for (const [i, change] of stream.entries()) {
            // A clock that runs back as well as forward, and stands still (steps inside one second).
            now += clockSteps[i % clockSteps.length]!;
            const crashAfter = crashes[i % crashes.length]!;
            if (crashAfter > 0) await applyUntilCrash(store.newClient(), table, change, crashAfter, opts);
            await applier.apply(change);
            const after = await entries(table);
            for (const [id, entry] of after) {
              const where = { change: i, id, entry };
              expect({ ...where, stampIsLastModified: entry.stamp === entry.lastModified, integer: entry.sequence <= Math.min(SEQUENCE_MAX, i + 1) }).toEqual({ ...where, stampIsLastModified: true, integer: true });
              const seen = last.get(id);
              if (seen) {
                const moved = { sequence: entry.sequence - seen.sequence, lastModified: Date.parse(entry.lastModified) - Date.parse(seen.lastModified) };
                expect({ ...where, neverBack: moved.sequence >= 0 && moved.lastModified >= 0 }).toEqual({ ...where, neverBack: true });
                if (entry.shown !== seen.shown) expect({ ...where, upTogether: moved.sequence > 0 && moved.lastModified > 0 }).toEqual({ ...where, upTogether: true });
                // Between two consecutive reads of the event, nothing shown changed: nothing moved.
                else if (before.has(id)) expect({ ...where, moved }).toEqual({ ...where, moved: { sequence: 0, lastModified: 0 } });
              }
              last.set(id, entry);
            }
            before = after;
          }
        },
      ),
      { numRuns: RUNS },
    );
  }, TIMEOUT);
});
