/**
 * The two kinds of unit a derivation works on (docs/data-model.md, "Units"),
 * each with its own counter and its own items, and what each reads and
 * derives:
 * - the event unit (counter `SEQ`): the event item, from the event's source
 *   and its creator;
 * - a guest unit (counter `SEQ#{userId}`): one user's RSVP item, count entry
 *   and profile entry in one event, from the event's source, the RSVP's
 *   source, the user and the event's creator.
 * No item belongs to two units, so the `gen` stamps on an item come from one
 * counter and compare.
 */
import { deriveEventItem, deriveGuestItems } from './derive.js';
import { expectation, type Expectation } from './derivation-plan.js';
import type { CalendarRevision, EventRecord, RsvpSourceItem, UserRecord } from '../table/items.js';
import { countBucket, keys, SK } from '../table/table.js';
import { keyString, type Item, type Key } from '../table/table-io.js';

export interface Unit {
  readonly kind: 'event' | 'guest';
  readonly eventId: string;
  /** A guest unit's user. */
  readonly userId?: string;
  readonly seq: Key;
  readonly own: readonly Key[];
}

export const eventUnit = (eventId: string): Unit => ({ kind: 'event', eventId, seq: keys.derivationSeq(eventId), own: [keys.event(eventId)] });

export const guestUnit = (eventId: string, userId: string): Unit => ({
  kind: 'guest',
  eventId,
  userId,
  seq: keys.guestSeq(eventId, userId),
  own: [keys.rsvp(eventId, userId), keys.guestCount(eventId, userId), keys.profileEntry(eventId, userId)],
});

/** A guest unit's count bucket. */
export const bucketOf = (unit: Unit): string => countBucket(unit.userId!);

/** The sources a unit reads besides its counter and its own items (the creator's user item too, when its id is known). */
export function sourceKeys(unit: Unit, creatorId?: string): Key[] {
  const creator = creatorId && creatorId !== unit.userId ? [keys.user(creatorId)] : [];
  if (unit.kind === 'event') return [keys.eventSource(unit.eventId), ...creator];
  return [keys.eventSource(unit.eventId), keys.rsvpSource(unit.eventId, unit.userId!), keys.user(unit.userId!), ...creator];
}

/** What a unit's sources give: its targets (and the live records they came from), or the creator's key when it was not read. */
export type Derived = { targets: Item[]; event: EventRecord | undefined; user: UserRecord | undefined; creator: UserRecord | undefined } | { needs: Key };

const live = <T>(item: Item | undefined, field: string): T | undefined => (item && !item.deleted ? (item[field] as T | undefined) : undefined);

/** The unit's targets from the items read (keyed by keyString), as the full load derives them (derive.ts). */
export function targetsOf(unit: Unit, got: ReadonlyMap<string, Item>): Derived {
  const event = live<EventRecord>(got.get(keyString(keys.eventSource(unit.eventId))), 'event');
  const user = unit.userId ? live<UserRecord>(got.get(keyString(keys.user(unit.userId))), 'user') : undefined;
  let creator: UserRecord | undefined;
  if (event && event.creator_id === unit.userId) creator = user;
  else if (event) {
    const key = keys.user(event.creator_id);
    if (!got.has(keyString(key)) && !got.has(`absent:${keyString(key)}`)) return { needs: key };
    creator = live<UserRecord>(got.get(keyString(key)), 'user');
  }
  if (unit.kind === 'event') {
    const revision = live<CalendarRevision>(got.get(keyString(keys.eventSource(unit.eventId))), 'revision');
    return { targets: deriveEventItem({ event, creator, revision }) as unknown as Item[], event, user, creator };
  }
  const rsvp = live<RsvpSourceItem['rsvp']>(got.get(keyString(keys.rsvpSource(unit.eventId, unit.userId!))), 'rsvp');
  return { targets: deriveGuestItems({ event, creator, rsvp, user }) as unknown as Item[], event, user, creator };
}

/**
 * Marks a set of keys as read and absent (a BatchGetItem answers nothing for
 * them), so that targetsOf can tell "not there" from "not asked for".
 */
export function withAbsent(got: Map<string, Item>, asked: readonly Key[]): Map<string, Item> {
  for (const k of asked) if (!got.has(keyString(k))) got.set(`absent:${keyString(k)}`, {});
  return got;
}

/**
 * What a derivation of `unit` will probably do, from what was read before its
 * number: `before` holds the unit's sources as they were (or its items as
 * they are, when read), `after` the sources as the change makes them. The
 * creator, when not read, counts as live: a prediction only saves round trips.
 */
export function predict(unit: Unit, before: ReadonlyMap<string, Item>, after: ReadonlyMap<string, Item>): Expectation {
  const assumeCreator = (m: ReadonlyMap<string, Item>): Map<string, Item> => {
    const copy = new Map(m);
    const event = live<EventRecord>(copy.get(keyString(keys.eventSource(unit.eventId))), 'event');
    const key = event ? keyString(keys.user(event.creator_id)) : undefined;
    if (key && !copy.has(key)) copy.set(key, { type: 'USER', user: { id: event!.creator_id, username: event!.creator_id, name: null, image: null, verification_status: null } });
    return copy;
  };
  const targets = (m: ReadonlyMap<string, Item>) => {
    const d = targetsOf(unit, assumeCreator(m));
    return 'targets' in d ? d.targets : [];
  };
  const have = new Map<string, Item | undefined>();
  const derivedBefore = targets(before);
  for (const k of unit.own) {
    const read = before.get(keyString(k));
    have.set(k[SK]!, read ?? (before.has(`absent:${keyString(k)}`) ? undefined : derivedBefore.find((t) => t[SK] === k[SK])));
  }
  return expectation(unit.own, have, targets(after));
}
