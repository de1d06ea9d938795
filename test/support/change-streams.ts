/**
 * Random source histories for the change-stream property tests: a small
 * dataset D0, then a sequence of edits a web product could make (creates,
 * edits, hide/unhide, moves, deletes with cascades, RSVP flips, renames
 * including case-only ones and reuse of a deleted user's name, anonymous
 * RSVPs), each with the entity's next version; then delivered imperfectly
 * (duplicates, stale replays, neighbours swapped). Private fields carry the
 * marker PRIVATE so a test can prove they are never stored.
 */
import fc from 'fast-check';
import type { Change } from '../../lambdas/core/changes.js';
import type { Dataset, SourceEvent, SourceRsvp, SourceUser } from '../../lambdas/core/dataset.js';

export const PRIVATE_MARKER = 'PRIVATE';
const NAMES = ['ann', 'bob', 'cy', 'dee', 'eli', 'fay', 'gus', 'hal'];
const STATUSES = ['published', 'published', 'draft', 'cancelled'] as const;
const VISIBILITIES = ['public', 'public', 'private', 'unlisted'] as const;
const RSVP_STATUSES = ['yes', 'maybe', 'no'] as const;
const BASE = Date.parse('2026-11-01T00:00:00.000Z');
/**
 * Where events are (PRODUCT P17): a few places in several spellings (case,
 * spaces, a country's code or name), a city or a country alone, and none;
 * edits move events between them.
 */
const LOCATIONS = [
  null,
  { city: 'Lisbon', country: 'PT' },
  { city: ' LISBON ', country: 'Portugal' },
  { city: 'Porto', country: 'pt' },
  { city: 'Lisbon', country: 'Spain' },
  { city: null, country: 'ES' },
  { city: 'porto', country: null },
] as const;
/** Every place query the events above can answer, spelled otherwise than the data: a follower of each sees every move. */
export const FOLLOWED_PLACES: readonly { city?: string; country?: string }[] = [
  { city: 'lisbon' },
  { city: 'PORTO' },
  { country: 'portugal' },
  { country: 'es' },
  { city: ' Lisbon', country: 'PT' },
  { city: 'porto ', country: 'Portugal' },
  { city: 'LISBON', country: 'Spain' },
];

interface Step {
  kind: number;
  a: number;
  b: number;
  c: number;
}

export interface History {
  d0: Dataset;
  /** The changes in the order the source made them. */
  made: Change[];
  /** The changes as delivered: with duplicates, stale replays and swaps. */
  delivered: Change[];
}

const stepArb = fc.record({ kind: fc.nat(13), a: fc.nat(99), b: fc.nat(99), c: fc.nat(99) });
const deliveryArb = fc.array(fc.record({ kind: fc.nat(2), at: fc.nat(999), from: fc.nat(999) }), { maxLength: 8 });

export function historyArb(opts: { maxSteps?: number } = {}): fc.Arbitrary<History> {
  return fc
    .record({
      users: fc.integer({ min: 1, max: 4 }),
      events: fc.array(stepArb, { maxLength: 4 }),
      rsvps: fc.array(stepArb, { maxLength: 5 }),
      steps: fc.array(stepArb, { minLength: 1, maxLength: opts.maxSteps ?? 18 }),
      delivery: deliveryArb,
    })
    .map((p) => buildHistory(p.users, p.events, p.rsvps, p.steps, p.delivery));
}

function user(id: string, username: string, n: number): SourceUser {
  return {
    id,
    username,
    name: n % 3 === 0 ? null : `Name ${n}`,
    image: n % 2 ? `https://img.example/${n}.png` : null,
    verification_status: (['verified', 'id_verified', null] as const)[n % 3],
    email: `${PRIVATE_MARKER}-${id}@example.com`,
    phone: n % 2 ? `${PRIVATE_MARKER}-555-${n}` : null,
  };
}

function event(id: string, creatorId: string, s: Step, edit = 0): SourceEvent {
  // Mostly within two months of BASE; a third of the events spread over a year and a half, so moves cross
  // days, months and years (the buckets of the list totals).
  const day = (((s.a * 7 + s.b) % 60) - 20) * (s.c % 3 === 0 ? 9 : 1);
  const start = BASE + day * 86_400_000 + (s.c % 4) * 3_600_000;
  return {
    id,
    creator_id: creatorId,
    title: `Event ${id} v${edit}`,
    description: s.c % 3 ? `**Desc** ${edit}` : null,
    cover: null,
    location: ((place) => (place ? { name: `Hall ${s.b}`, ...place } : null))(LOCATIONS[(s.a + s.b + s.c) % LOCATIONS.length]),
    start_date: new Date(start).toISOString(),
    end_date: s.a % 2 ? new Date(start + 7_200_000).toISOString() : null,
    timezone: s.c % 2 ? 'Europe/Berlin' : 'America/Chicago',
    status: STATUSES[s.a % STATUSES.length]!,
    visibility: VISIBILITIES[s.b % VISIBILITIES.length]!,
    cost: s.c % 5 ? null : 10,
    created_at: new Date(BASE - (s.a + s.b + edit) * 3_600_000).toISOString(),
  };
}

function rsvp(eventId: string, userId: string | null, s: Step, edit = 0): SourceRsvp {
  return {
    event_id: eventId,
    user_id: userId,
    status: RSVP_STATUSES[(s.a + edit) % 3]!,
    rsvp_date: new Date(BASE + (s.b + edit) * 60_000).toISOString(),
    ...(userId === null ? { name: `${PRIVATE_MARKER} anon`, email: `${PRIVATE_MARKER}@anon.example` } : {}),
  };
}

const pick = <T>(list: readonly T[], n: number): T | undefined => (list.length ? list[n % list.length] : undefined);

export function buildHistory(nUsers: number, eventSteps: Step[], rsvpSteps: Step[], steps: Step[], delivery: { kind: number; at: number; from: number }[]): History {
  // The source of truth, simulated: live records and each entity's version.
  const users = new Map<string, SourceUser>();
  const events = new Map<string, SourceEvent>();
  const rsvps = new Map<string, SourceRsvp & { user_id: string }>();
  const versions = new Map<string, number>();
  const deletedNames: string[] = [];
  let counter = 0;
  const next = (entity: string) => {
    const v = (versions.get(entity) ?? 0) + 1;
    versions.set(entity, v);
    return v;
  };
  const takenNames = () => new Set([...users.values()].map((u) => u.username.toLowerCase()));
  const freshName = (n: number) => {
    const taken = takenNames();
    const reuse = deletedNames.find((name) => !taken.has(name.toLowerCase()));
    if (reuse && n % 2) return reuse;
    for (let i = 0; ; i++) {
      const name = `${NAMES[(n + i) % NAMES.length]}${i >= NAMES.length ? i : ''}`;
      if (!taken.has(name.toLowerCase())) return name;
    }
  };

  for (let i = 0; i < nUsers; i++) users.set(`usr_${i}`, user(`usr_${i}`, NAMES[i]!, i));
  eventSteps.forEach((s, i) => {
    const creator = pick([...users.keys()], s.a)!;
    events.set(`evt_${i}`, event(`evt_${i}`, creator, s));
  });
  const anonymous: SourceRsvp[] = [];
  for (const s of rsvpSteps) {
    const e = pick([...events.keys()], s.a);
    if (!e) continue;
    if (s.c % 4 === 0) anonymous.push(rsvp(e, null, s));
    else {
      const u = pick([...users.keys()], s.b)!;
      rsvps.set(`${e}/${u}`, { ...rsvp(e, u, s), user_id: u });
    }
  }
  const d0: Dataset = { users: [...users.values()], events: [...events.values()], rsvps: [...rsvps.values(), ...anonymous] };

  const made: Change[] = [];
  for (const s of steps) {
    const liveUsers = [...users.keys()];
    const liveEvents = [...events.keys()];
    switch (s.kind) {
      case 0: {
        // a new user, possibly taking a deleted user's name
        const id = `usr_n${counter++}`;
        const u = user(id, freshName(s.a), s.b);
        users.set(id, u);
        made.push({ type: 'user.upserted', version: next(id), user: u });
        break;
      }
      case 1:
      case 2: {
        // rename (case-only when kind 2) or edit
        const id = pick(liveUsers, s.a);
        if (!id) break;
        const old = users.get(id)!;
        const username = s.kind === 2 ? (old.username === old.username.toUpperCase() ? old.username.toLowerCase() : old.username.toUpperCase()) : s.b % 2 ? freshName(s.c) : old.username;
        const u = { ...user(id, username, s.c), username };
        users.set(id, u);
        made.push({ type: 'user.upserted', version: next(id), user: u });
        break;
      }
      case 3: {
        const id = pick(liveUsers, s.a);
        if (!id || liveUsers.length < 2) break;
        deletedNames.push(users.get(id)!.username);
        users.delete(id);
        for (const [eid, e] of events) if (e.creator_id === id) {
          events.delete(eid);
          for (const k of [...rsvps.keys()]) if (k.startsWith(`${eid}/`)) rsvps.delete(k);
        }
        for (const k of [...rsvps.keys()]) if (k.endsWith(`/${id}`)) rsvps.delete(k);
        made.push({ type: 'user.deleted', version: next(id), user_id: id });
        break;
      }
      case 4: {
        const creator = pick(liveUsers, s.a);
        if (!creator) break;
        const id = `evt_n${counter++}`;
        const e = event(id, creator, s);
        events.set(id, e);
        made.push({ type: 'event.upserted', version: next(id), event: e });
        break;
      }
      case 5:
      case 6:
      case 7: {
        // edit / hide or unhide / move to another creator
        const id = pick(liveEvents, s.a);
        if (!id) break;
        const old = events.get(id)!;
        const creator = s.kind === 7 ? pick(liveUsers, s.b)! : old.creator_id;
        const e = { ...event(id, creator, { ...s, a: s.kind === 6 ? s.b : s.a }, versions.get(id) ?? 0), created_at: old.created_at };
        events.set(id, e);
        made.push({ type: 'event.upserted', version: next(id), event: e });
        break;
      }
      case 8: {
        const id = pick(liveEvents, s.a);
        if (!id) break;
        events.delete(id);
        for (const k of [...rsvps.keys()]) if (k.startsWith(`${id}/`)) rsvps.delete(k);
        made.push({ type: 'event.deleted', version: next(id), event_id: id });
        break;
      }
      case 9:
      case 10:
      case 11: {
        // RSVP (new or flipped)
        const e = pick(liveEvents, s.a);
        const u = pick(liveUsers, s.b);
        if (!e || !u) break;
        const r = { ...rsvp(e, u, s, versions.get(`${e}/${u}`) ?? 0), user_id: u };
        rsvps.set(`${e}/${u}`, r);
        made.push({ type: 'rsvp.upserted', version: next(`${e}/${u}`), rsvp: r });
        break;
      }
      case 12: {
        const key = pick([...rsvps.keys()], s.a);
        if (!key) break;
        const r = rsvps.get(key)!;
        rsvps.delete(key);
        made.push({ type: 'rsvp.deleted', version: next(key), event_id: r.event_id, user_id: r.user_id });
        break;
      }
      case 13: {
        const e = pick(liveEvents, s.a);
        if (!e) break;
        made.push({ type: 'rsvp.upserted', version: 1 + s.b, rsvp: rsvp(e, null, s) });
        break;
      }
    }
  }

  // Imperfect delivery: duplicates, stale replays (an older change again, later), swaps.
  const delivered = [...made];
  for (const d of delivery) {
    if (delivered.length === 0) break;
    const at = d.at % (delivered.length + 1);
    const from = delivered[d.from % delivered.length]!;
    if (d.kind === 0) delivered.splice(at, 0, from);
    else if (d.kind === 1) delivered.push(from);
    else if (at + 1 < delivered.length) [delivered[at], delivered[at + 1]] = [delivered[at + 1]!, delivered[at]!];
  }
  return { d0, made, delivered };
}
