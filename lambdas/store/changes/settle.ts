/**
 * What a stored source item still owes the read model, decided by the item
 * alone (docs/data-model.md, "Write side"). A source item is written with
 * `pending` set; whoever next touches the entity — the change itself, a
 * newer or older change, a duplicate, a redelivery, a continuation — first
 * settles it, and only then does its own work. So the follow-up never
 * depends on which change happens to arrive next.
 *
 * | stored item            | follow-up                                                          |
 * |------------------------|--------------------------------------------------------------------|
 * | user tombstone         | its keys closed (user-keys.ts); cascade: each linked event it      |
 * |                        | created, and its RSVPs, go; its guest unit in every linked event   |
 * | live user              | fan-out: per linked event, the user's guest unit, and the event    |
 * |                        | unit of the events the user created (fan-out.ts)                   |
 * | event tombstone        | tombstone its RSVPs; the event unit, then every guest unit         |
 * | live event             | creator gone? the event goes (cascade); the event unit; and every  |
 * |                        | guest unit only when what they show of the event changed           |
 * | RSVP tombstone         | the guest unit (and its count bucket)                              |
 * | live RSVP              | event or user gone? the RSVP goes; else as a tombstone does        |
 *
 * An event's own unit shows nothing of its guests (the counts are the
 * buckets': items.ts), so an RSVP derives its guest unit alone.
 *
 * A reference check (the RSVP's event and user, the event's creator) is made
 * on what the unit's derivation reads after its number: the change wrote the
 * user's link before (or with) its source item, and a recovering settle
 * writes the link again with that number, so the check reads after the link
 * landed, and a deletion that reads the links after its tombstone meets one
 * or the other.
 *
 * `pending` is cleared only when the follow-up is done, conditional on the
 * very state settled (version and liveness), so a cascade that turned a
 * pending live item into a tombstone keeps the tombstone's own pending.
 * "Done" means every derivation of this settle finished as its unit's
 * newest: one that handed its unit to a newer number (derivation.ts) may have
 * handed it to an applier that dies right after taking it — a duplicate of
 * this very change settling this very item, whose redelivery would then find
 * nothing pending. Such a settle answers false and leaves `pending` (and the
 * fan-out's progress before that chunk) in place; the applier reads the item
 * again and settles it again (applier.ts), and if it dies first, the next
 * arrival does.
 *
 * Cascades re-check at the moment they write: a dependent is tombstoned
 * conditional on the exact version the decision was made on, after reading
 * that the parent is still deleted, so a newer version (an event moved to
 * another host, an RSVP of a user re-created since) is never deleted by a
 * decision made on an older one.
 */
import { userEventLink } from './derive.js';
import type { DeriveOptions, Deriver, Outcome, Prepared } from './derivation.js';
import { FanOut, type FanOutOptions, type SourceItem } from './fan-out.js';
import type { CalendarRevision, EventSourceItem, UserItem, UserRecord } from '../table/items.js';
import { revisionOf } from '../../core/calendar-revision.js';
import { PK, RSVP_SOURCE_PREFIX, SK, keys } from '../table/table.js';
import { keyString, type Item, type Key, type TableIO } from '../table/table-io.js';
import { eventUnit, guestUnit } from './units.js';
import { all, each } from '../table/waves.js';
import { queryGuestShards, type RecordRead } from './guest-shards.js';
import { marksGuest } from './shard-record.js';

export { FanOutIncomplete, type SourceItem } from './fan-out.js';
export type SettleOptions = FanOutOptions & {
  /**
   * A deleted user's keys, closed before the cascade (user-keys.ts): one
   * bounded call, true once every key is closed; called again until then,
   * the time checked between calls.
   */
  closeUserKeys?: (userId: string, version: number) => Promise<boolean>;
};

/** What the applier already did toward this settle: the wave A of the derivation the change's source item owes (derivation.ts). */
export interface Head {
  prepared?: Promise<Prepared>;
  expect?: DeriveOptions['expect'];
  creator?: string;
}

const live = (item: Item | undefined): boolean => !!item && !item.deleted;

export class Settler {
  private readonly fanOut: FanOut;

  constructor(
    private readonly io: TableIO,
    private readonly deriver: Deriver,
    private readonly opts: SettleOptions = {},
  ) {
    this.fanOut = new FanOut(io, deriver, opts);
  }

  /**
   * Does what the stored item still owes, then clears its `pending`. False:
   * some unit was handed to a newer derivation, `pending` is left for a
   * settle that finishes every unit itself (file comment).
   *
   * `recovering`: the item was found pending, not just written by this
   * settle's caller, so its first settle may have died after a derived
   * item's write and before that write's feed entries or count. The
   * derivations then finish every note they meet and recount their buckets.
   */
  async settle(stored: SourceItem, recovering = false, head: Head = {}): Promise<boolean> {
    if (!stored.pending) return true;
    const r = recovering;
    let done = true;
    switch (stored.type) {
      case 'USER': {
        const userId = String(stored.user_id);
        if (stored.deleted) await this.closeKeys(userId, stored.version);
        done = stored.deleted
          ? await this.fanOut.links(stored, () => Promise.resolve(), async (part) => (await each(part, (e) => this.cascadeUser(e, userId, r))).every(Boolean))
          : await this.fanOut.links(stored, (part) => this.fanOut.readUserChunk(stored, part), (part, read) => this.fanOut.userChunk(stored, part, read, r));
        break;
      }
      case 'EVENT_SOURCE': {
        const eventId = String(stored.event_id);
        const creator = (stored as unknown as EventSourceItem).event?.creator_id;
        // A deletion's two walks share one read of the guest shard record, made after its tombstone (guest-shards.ts).
        const record = stored.deleted ? await this.tombstoneRsvpsOf(eventId, stored.version) : undefined;
        // The event item first: hiding it hides the event from every route that starts from it.
        const check = stored.deleted ? undefined : (got: ReadonlyMap<string, Item>) => (creator && !live(got.get(keyString(keys.user(creator)))) ? `user ${creator}` : null);
        const outcome = await this.deriver.derive(eventUnit(eventId), { recovering: r, check, creator, ...head, ...(r && creator && !stored.deleted ? { alongside: () => this.io.put(userEventLink(creator, eventId) as unknown as Item) } : {}) });
        if (typeof outcome === 'object') return this.tombstoneAndSettle(stored, r);
        done = outcome === 'finished';
        // A title edit shows nothing new on a guest's items; a deletion, a hide or a move does, on all of them.
        if (stored.deleted || stored.fanout) done = (await this.fanOut.guests(stored, creator, r, record)) && done;
        break;
      }
      case 'RSVP_SOURCE': {
        const eventId = String(stored.event_id);
        const userId = String(stored.user_id);
        // The event's or the user's deletion may have read before this RSVP existed: it goes here then.
        const check = stored.deleted ? undefined : (got: ReadonlyMap<string, Item>) => missingOf(got, eventId, userId);
        const link = r && !stored.deleted ? { alongside: () => this.io.put(userEventLink(userId, eventId) as unknown as Item) } : {};
        // Its source is stored in the guest's shard, so the shard is marked (shard-record.ts).
        const outcome = await this.deriver.derive(guestUnit(eventId, userId), { recovering: r, check, shard: 'marked', ...head, ...link });
        if (typeof outcome === 'object') return this.tombstoneAndSettle(stored, r);
        done = outcome === 'finished';
        break;
      }
      default:
        throw new Error(`no follow-up is known for a ${stored.type} item`);
    }
    if (!done) return false;
    await this.clearPending(stored);
    return true;
  }

  /**
   * A deleted user's keys, a bounded call at a time: a user with thousands
   * of revoked keys takes many calls, and an invocation short of time stops
   * between two (FanOutIncomplete: the continuation goes on where the
   * erased records say).
   */
  private async closeKeys(userId: string, version: number): Promise<void> {
    const close = this.opts.closeUserKeys;
    if (!close) return;
    while (!(await close(userId, version))) this.fanOut.checkTime(`${userId}'s keys`);
  }

  async liveUser(userId: string): Promise<UserRecord | undefined> {
    const item = (await this.io.get(keys.user(userId))) as UserItem | undefined;
    return item && !item.deleted ? item.user : undefined;
  }

  private async clearPending(stored: SourceItem): Promise<void> {
    await this.io.updateIf(keyOf(stored), 'REMOVE #pending, pending_after, fanout', stored.deleted ? '#version = :v AND #deleted = :true' : '#version = :v AND attribute_not_exists(#deleted)', {
      ':v': stored.version,
      ...(stored.deleted ? { ':true': true } : {}),
    }, { '#pending': 'pending', '#deleted': 'deleted' });
  }

  /** One linked event of a deleted user: the event goes if the user created it (checked at the write), and the user's RSVP to it. */
  private async cascadeUser(eventId: string, userId: string, recovering: boolean): Promise<boolean> {
    let done = true;
    for (;;) {
      const source = (await this.io.get(keys.eventSource(eventId))) as (EventSourceItem & SourceItem) | undefined;
      if (source?.deleted && source.pending) done = (await this.settle(source, true)) && done;
      if (!source?.event || source.deleted || source.event.creator_id !== userId) break;
      if (await this.liveUser(userId)) return done; // re-created since: whoever re-created it settled this deletion first
      if (await this.tombstone(keys.eventSource(eventId), source.version, true, revisionOf(source))) {
        done = (await this.cascadeEvent(eventId, source.version, recovering)) && done;
        break;
      }
    }
    // The RSVP, and the event's shard record with it: the user's unit may be its first in its shard (a host with no RSVP).
    const read = await this.io.getMany([keys.rsvpSource(eventId, userId), keys.guestShards(eventId)]);
    const rsvp = read.get(keyString(keys.rsvpSource(eventId, userId)));
    const shard = rsvp || marksGuest(read.get(keyString(keys.guestShards(eventId))), userId) ? 'marked' : 'unmarked';
    if (rsvp && !rsvp.deleted && !(await this.liveUser(userId))) await this.tombstone(keys.rsvpSource(eventId, userId), Number(rsvp.version), false);
    // An RSVP found pending may be one whose derivation died with its bucket's count landed and its entry not (a wave's
    // calls land in any order): its tombstone no longer owes that settle, so this derivation is the recovering one
    // and recounts (found by the deep exploration with the calls landing last sent first).
    const settlesPending = rsvp?.pending === true;
    // The event unit too: its item may still show the user as its host while a move away from them is in flight.
    const outcomes = await all([this.deriver.derive(guestUnit(eventId, userId), { recovering: recovering || settlesPending, shard }), this.deriver.derive(eventUnit(eventId), { recovering })]);
    return outcomes.every((o) => o === 'finished') && done;
  }

  /** A pending live item whose parent is gone: it becomes a tombstone (this exact version), then whatever is stored is settled. */
  private async tombstoneAndSettle(stored: SourceItem, recovering: boolean): Promise<boolean> {
    await this.tombstone(keyOf(stored), stored.version, true, stored.type === 'EVENT_SOURCE' ? revisionOf(stored as unknown as EventSourceItem) : undefined);
    const now = (await this.io.get(keyOf(stored))) as SourceItem | undefined;
    return now ? this.settle(now, recovering) : true;
  }

  /** An event tombstoned by a cascade at `version`: its RSVPs go, then its copies. */
  private async cascadeEvent(eventId: string, version: number, recovering: boolean): Promise<boolean> {
    return this.settle({ ...keys.eventSource(eventId), type: 'EVENT_SOURCE', event_id: eventId, version, deleted: true, pending: true }, recovering);
  }

  /**
   * The RSVPs of an event deleted at `version`. Each is read, then the event
   * is read still deleted at that version, then the RSVP is tombstoned at the
   * version read: an RSVP of the event re-created since is never touched.
   */
  private async tombstoneRsvpsOf(eventId: string, version: number): Promise<RecordRead> {
    const walk = await queryGuestShards(this.io, eventId, RSVP_SOURCE_PREFIX);
    const rsvps = (walk.items as SourceItem[]).filter((s) => !s.deleted);
    const record: RecordRead = { record: walk.record };
    // A chunk at a time, like a user's fan-out: a big event's RSVPs outlast no invocation (the tombstones are the progress).
    for (let i = 0; i < rsvps.length; i += this.fanOut.chunk) {
      if (i > 0) this.fanOut.checkTime(eventId);
      const event = await this.io.get(keys.eventSource(eventId));
      if (!event?.deleted || event.version !== version) return record;
      await each(rsvps.slice(i, i + this.fanOut.chunk), (s) => this.tombstoneRsvp(eventId, version, s));
    }
    return record;
  }

  /** One RSVP of an event deleted at `version`, at the version read (read again, and the event again, on a conflict). */
  private async tombstoneRsvp(eventId: string, version: number, first: SourceItem): Promise<void> {
    let s: SourceItem | undefined = first;
    while (s && !s.deleted) {
      if (await this.tombstone(keyOf(s), s.version, false)) {
        // A source found pending no longer owes its settle once tombstoned: its guest is derived here as the settle
        // that finishes it would (recovering: the bucket recounted), since a derivation that died may have left its
        // bucket's count landed without its entry; the fan-out that follows derives the guest again, as it does every one.
        if (s.pending) await this.deriver.derive(guestUnit(eventId, String(s.user_id)), { recovering: true, shard: 'marked' });
        return;
      }
      s = (await this.io.get(keyOf(s))) as SourceItem | undefined;
      const event = await this.io.get(keys.eventSource(eventId));
      if (!event?.deleted || event.version !== version) return;
    }
  }

  /**
   * Turns a live source item into a tombstone that keeps its version: only
   * the exact version the decision was made on; false when that version is no
   * longer there. It owes its own follow-up (`pending`) unless the caller's
   * pending item covers it (an RSVP whose event the caller derives next).
   * An event's tombstone keeps its calendar history (`revision`: the one read
   * at that version), as the change path's own deletion does (applier.ts).
   */
  private async tombstone(key: Key, version: number, owesFollowUp = true, revision?: CalendarRevision): Promise<boolean> {
    // A dependent whose follow-up the caller does (it derives the event next) owes nothing of its own, even if it was
    // still settling as a live item: that settle's work is moot now, and its clearing no longer matches.
    // A live walk's saved progress (`pending_after`, `fanout`) goes too: the tombstone's own walk starts from its
    // first guest, and a hide stopped half-way must not make it skip the guests the hide had done (they are derived
    // again for the deletion).
    const done = await this.io.updateIf(key, `SET #deleted = :true${owesFollowUp ? ', #pending = :true' : ''}${revision ? ', #revision = :revision' : ''} REMOVE #user, #event, #rsvp, pending_after, fanout${owesFollowUp ? '' : ', #pending'}`, '#version = :v AND attribute_not_exists(#deleted)', { ':v': version, ':true': true, ...(revision ? { ':revision': revision } : {}) }, {
      '#user': 'user',
      '#event': 'event',
      '#rsvp': 'rsvp',
      '#deleted': 'deleted',
      '#pending': 'pending',
      ...(revision ? { '#revision': 'revision' } : {}),
    });
    return done !== undefined;
  }
}

/** The first reference of a live RSVP that its derivation read unknown or deleted, or null. */
export function missingOf(got: ReadonlyMap<string, Item>, eventId: string, userId: string): string | null {
  const event = got.get(keyString(keys.eventSource(eventId))) as (Item & Partial<EventSourceItem>) | undefined;
  if (!event?.event || event.deleted) return `event ${eventId}`;
  if (!live(got.get(keyString(keys.user(userId))))) return `user ${userId}`;
  return null;
}

export type { Outcome };

function keyOf(item: Item): Key {
  return { [PK]: String(item[PK]), [SK]: String(item[SK]) };
}
