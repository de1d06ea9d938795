/**
 * The write side of the read model: applies one change record (PRODUCT P14)
 * to the table. `npm run data:apply` and the ingest Lambda both run it; the
 * argument for why it is safe is in docs/data-model.md, "Write side".
 *
 * Every change does the same three things, whatever arrives when, in waves
 * (calls sent together: waves.ts):
 *
 * 1. Read, in one consistent BatchGetItem, the entity's stored source item
 *    and the sources the change refers to (an RSVP's event and user, an
 *    event's creator). If the source item still owes work (`pending`: a
 *    crash, a time limit or a concurrent applier left it unfinished), settle
 *    it first (settle.ts decides the work from the stored item alone) and
 *    read again.
 * 2. Stale (the stored version is not older): done, nothing else changes.
 *    Otherwise check the change's references (an upsert whose event or user
 *    is unknown or deleted waits) and write, together, the user's link, the
 *    source item (`pending` set, conditional on the exact settled version
 *    read) and the first wave of the derivation its settle will run (an
 *    RSVP's guest unit, an event's own unit: its number, the marks and
 *    tickets the change predicts). If someone got there first, start again
 *    at 1.
 * 3. Settle the item just written: re-check its references, cascade,
 *    re-derive what depends on it (derivation.ts), clear `pending`. A settle
 *    that handed a unit to a newer derivation leaves `pending` (settle.ts):
 *    read the item again and settle whatever it still owes.
 *
 * A source write whose response was lost (it landed; the SDK's retry failed
 * its condition) reads as "someone got there first": step 1 reads the item,
 * settles it like any pending item, and reports the change stale, as it
 * would a duplicate's. The table is the same either way.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import type { Change } from '../../core/changes.js';
import { systemClock, type Clock } from '../../core/clock.js';
import type { Outcome } from '../../core/fold.js';
import { calendarRevision, revisionOf, type RevisionSource } from '../../core/calendar-revision.js';
import type { CalendarRevision, EventRecord } from '../table/items.js';
import { eventSourceItem, guestProjection, rsvpRecord, rsvpSourceItem, userEventLink, userItem, userRecord } from './derive.js';
import { Deriver } from './derivation.js';
import { sameContent } from '../table/item-content.js';
import { Settler, missingOf, type Head, type SettleOptions, type SourceItem } from './settle.js';
import { keys } from '../table/table.js';
import type { PlanKeys, RevokeAudit } from '../keys/key-store.js';
import type { WebhookAudit } from '../webhooks/key-webhooks.js';
import { TableIO, keyString, type Item, type Key } from '../table/table-io.js';
import type { BatchGetOptions } from '../table/batch-get.js';
import { eventUnit, guestUnit, predict, withAbsent, type Unit } from './units.js';
import { userKeysCloser } from '../keys/user-keys.js';
import { marksGuest } from './shard-record.js';
import { all } from '../table/waves.js';

export { FanOutIncomplete } from './settle.js';

/**
 * Settles one change may do before it gives up (and is redelivered, `pending`
 * still set): a settle is repeated only when a concurrent applier took a
 * newer number of one of its units, so a few suffice unless appliers keep
 * racing on the same item, which a redelivery's delay then breaks.
 */
const MAX_SETTLES = 10;

/** A change whose source item kept being settled concurrently; its redelivery settles it. */
export class SettleContended extends Error {
  constructor(readonly subject: string) {
    super(`${subject} was settled ${MAX_SETTLES} times while concurrent appliers took newer numbers; the redelivery settles it`);
    this.name = 'SettleContended';
  }
}

export type ApplyResult = Outcome & {
  /** Items written (puts and updates) for this change, fan-out included. */
  writes: number;
  /** Units re-derived (an event item; one guest's items in one event). */
  derivations: number;
};

export interface ApplierOptions extends SettleOptions {
  clock?: Clock;
  /** A fresh token for each derivation's marks (derivation.ts); tests inject a deterministic one. */
  token?: () => string;
  /** API Gateway, to delete a deleted user's plan keys (AWS; none exist locally). */
  planKeys?: PlanKeys;
    /** The audit line of each key a user's deletion revokes (user-keys.ts). */
  revokeAudit?: RevokeAudit;
  /** And of each webhook of those keys it closes. */
  webhookAudit?: WebhookAudit;
  /** The reads by key's attempts and backoff (batch-get.ts): tests inject the sleep. */
  batchGet?: BatchGetOptions;
}

/** What a change writes, and what it needs before it may write it. */
interface Plan {
  key: Key;
  item: (stored: Item | undefined) => Item;
  /** Read with the stored source item: the references, and what predicts the derivation. */
  reads: Key[];
  /** A reference that must resolve first (an upsert waits otherwise), from what was read. */
  missing?: (got: ReadonlyMap<string, Item>) => string | null;
  /** Written with the source item: the link a deletion's fan-out reads. */
  link?: Item;
  /** The derivation the settle will run first, started with the source write. */
  unit?: Unit;
  /** The event's creator, when the change names it (read with the unit's sources). */
  creator?: (got: ReadonlyMap<string, Item>) => string | undefined;
  /** An RSVP's guest: its shard must be marked in the event's record (read with the sources) before the source write. */
  guest?: { eventId: string; userId: string };
}

export class ChangeApplier {
  private readonly io: TableIO;
  private readonly deriver: Deriver;
  private readonly settler: Settler;
  private readonly clock: Clock;

  constructor(client: DynamoDBDocumentClient, tableName: string, opts: ApplierOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.io = new TableIO(client, tableName, opts.batchGet);
    this.deriver = new Deriver(this.io, this.clock, opts.token ?? randomUUID);
    this.settler = new Settler(this.io, this.deriver, { ...opts, closeUserKeys: opts.closeUserKeys ?? userKeysCloser(client, tableName, opts) });
  }

  async apply(change: Change): Promise<ApplyResult> {
    this.io.writes = 0;
    this.deriver.derivations = 0;
    const plan = this.plan(change);
    let outcome: Outcome;
    try {
      outcome = plan ? await this.replace(plan, change.version) : ({ result: 'applied' } as const);
    } finally {
      // Its feeds' flushes went on beside the rest of its work (feed-append.ts, PendingFlushes): none is left in flight.
      await this.deriver.versions.flushes.settled();
    }
    return { ...outcome, writes: this.io.writes, derivations: this.deriver.derivations };
  }

  private plan(change: Change): Plan | null {
    const v = change.version;
    const tombstone = (key: Key, type: string, ids: Item) => (): Item => ({ ...key, type, ...ids, version: v, deleted: true, pending: true });
    const creatorOfStored = (eventId: string) => (got: ReadonlyMap<string, Item>) => (got.get(keyString(keys.eventSource(eventId)))?.event as EventRecord | undefined)?.creator_id;
    switch (change.type) {
      case 'user.upserted': {
        const user = userRecord(change.user);
        const item = userItem(user, v) as unknown as Item;
        // Only the public part of a user is copied anywhere: a change of e-mail or phone alone owes no fan-out.
        const unchanged = (stored: Item | undefined) => !!stored?.user && !stored.deleted && sameContent(stored.user as Item, user as unknown as Item);
        return { key: keys.user(user.id), reads: [], item: (stored) => (unchanged(stored) ? item : { ...item, pending: true }) };
      }
      case 'user.deleted':
        return { key: keys.user(change.user_id), reads: [], item: tombstone(keys.user(change.user_id), 'USER', { user_id: change.user_id }) };
      case 'event.upserted': {
        const { event } = change;
        // Whether every guest's items must be derived again: only when what they show of the event changes.
        const fanout = (stored: Item | undefined) => stored?.deleted === true || guestProjection(stored?.event as EventRecord | undefined) !== guestProjection(event);
        return {
          key: keys.eventSource(event.id),
          reads: [keys.user(event.creator_id)],
          // The calendar history counts what a calendar shows changing (lambdas/core/calendar-revision.ts).
          item: (stored) => ({
            ...(eventSourceItem(event, v, calendarRevision(stored as RevisionSource | undefined, event, this.clock())) as unknown as Item),
            pending: true,
            ...(fanout(stored) ? { fanout: true } : {}),
          }),
          missing: (got) => (isLive(got.get(keyString(keys.user(event.creator_id)))) ? null : `user ${event.creator_id}`),
          link: userEventLink(event.creator_id, event.id) as unknown as Item,
          unit: eventUnit(event.id),
          creator: () => event.creator_id,
        };
      }
      case 'event.deleted': {
        const key = keys.eventSource(change.event_id);
        // The tombstone keeps the calendar history: an event re-created later goes on counting from it.
        const revision = (stored: Item | undefined) => revisionOf(stored as RevisionSource | undefined);
        return { key, reads: [], item: (stored) => ({ ...tombstone(key, 'EVENT_SOURCE', { event_id: change.event_id })(), ...withRevision(revision(stored)) }), unit: eventUnit(change.event_id) };
      }
      case 'rsvp.upserted': {
        if (change.rsvp.user_id == null) return null; // an anonymous guest: accepted, nothing stored
        const record = rsvpRecord({ ...change.rsvp, user_id: change.rsvp.user_id });
        return {
          key: keys.rsvpSource(record.event_id, record.user_id),
          reads: [keys.eventSource(record.event_id), keys.user(record.user_id), keys.guestShards(record.event_id)],
          guest: { eventId: record.event_id, userId: record.user_id },
          item: () => ({ ...(rsvpSourceItem(record, v) as unknown as Item), pending: true }),
          missing: (got) => missingOf(got, record.event_id, record.user_id),
          link: userEventLink(record.user_id, record.event_id) as unknown as Item,
          unit: guestUnit(record.event_id, record.user_id),
          creator: creatorOfStored(record.event_id),
        };
      }
      case 'rsvp.deleted': {
        const { event_id: eventId, user_id: userId } = change;
        const key = keys.rsvpSource(eventId, userId);
        return {
          key,
          reads: [keys.eventSource(eventId), keys.user(userId), keys.guestShards(eventId)],
          item: tombstone(key, 'RSVP_SOURCE', { event_id: eventId, user_id: userId }),
          unit: guestUnit(eventId, userId),
          creator: creatorOfStored(eventId),
          guest: { eventId, userId },
        };
      }
    }
  }

  /** Steps 1–3 of the file comment. */
  private async replace(plan: Plan, version: number): Promise<Outcome> {
    let applied = false;
    for (let settles = 0; ; ) {
      const asked = [plan.key, ...plan.reads];
      const got = withAbsent(await this.io.getMany(asked), asked);
      const stored = got.get(keyString(plan.key)) as SourceItem | undefined;
      if (stored?.pending) {
        if (++settles > MAX_SETTLES) throw new SettleContended(`${plan.key.pk} ${plan.key.sk}`);
        // Found pending: whoever settled it before may have died before a feed entry or a count (settle.ts, `recovering`).
        await this.settler.settle(stored, true);
        continue;
      }
      if (applied) return { result: 'applied' };
      if (stored && stored.version >= version) return { result: 'stale', storedVersion: stored.version };
      const missing = plan.missing?.(got);
      if (missing) return { result: 'waiting', missing };
      const item = plan.item(stored);
      // The source and the derivation's number are written in the guest's shard: its mark lands first. Marked already
      // unless this is the shard's first guest (the record was read with the sources), so a burst adds no write.
      if (plan.guest && !marksGuest(got.get(keyString(keys.guestShards(plan.guest.eventId))), plan.guest.userId)) await this.deriver.shards.mark(plan.guest.eventId, plan.guest.userId);
      const head = item.pending ? this.head(plan, got, item) : {};
      const [, written] = await all([
        plan.link ? this.io.put(plan.link) : Promise.resolve(),
        stored
          ? this.io.putIf(item, '#version = :was AND attribute_not_exists(#pending)', { ':was': stored.version }, { '#pending': 'pending' })
          : this.io.putIf(item, 'attribute_not_exists(#pk)'),
        head.prepared ?? Promise.resolve(),
      ] as const);
      // Someone got there first. The marks this change's derivation placed change nothing anyone reads; the next
      // derivation of the unit rewrites those items.
      if (!written) continue;
      if (await this.settler.settle(item as SourceItem, false, head)) return { result: 'applied' };
      applied = true; // a unit was handed off: settle again what the item still owes (file comment)
      settles++;
    }
  }

  /** The first wave of the derivation the written item's settle runs, predicted from what step 1 read (units.ts). */
  private head(plan: Plan, got: Map<string, Item>, item: Item): Head {
    if (!plan.unit) return {};
    const after = new Map(got).set(keyString(plan.key), item);
    const creator = plan.creator?.(after);
    const expect = predict(plan.unit, got, after);
    // A guest unit's shard was marked before (replace).
    return { creator, expect, prepared: this.deriver.prepare(plan.unit, { expect, creator, shard: 'marked' }) };
  }
}

const withRevision = (revision: CalendarRevision | undefined): Item => (revision ? { revision } : {});
const isLive = (item: Item | undefined): boolean => !!item && !item.deleted && item.type !== undefined;
