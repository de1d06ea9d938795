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
 * |                        | created, and its RSVPs, go                                         |
 * | live user              | fan-out: per linked event, the user's items and the event item     |
 * | event tombstone        | tombstone its RSVPs; the event item and every guest's items go     |
 * | live event             | creator gone? the event goes (cascade); the event item; and every  |
 * |                        | guest's items only when what they show of the event changed        |
 * | RSVP tombstone         | the guest's items, their count bucket, the event item              |
 * | live RSVP              | event or user gone? the RSVP goes; then as a tombstone does        |
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
import type { Deriver } from './derivation.js';
import type { EventSourceItem, RsvpRecord, RsvpSourceItem, UserItem, UserRecord } from './items.js';
import { GUEST_SEQ_PREFIX, LINK_PREFIX, PK, RSVP_SOURCE_PREFIX, SK, keys } from './table.js';
import type { Item, Key, TableIO } from './table-io.js';

export interface SettleOptions {
  /** Events derived or cascaded at once in a user's fan-out. */
  fanOutConcurrency?: number;
  /** Time left for this invocation; a fan-out stops between chunks when less than reserveMs is left. */
  remainingMs?: () => number;
  reserveMs?: number;
  /** A deleted user's keys: closed before the cascade (user-keys.ts). */
  closeUserKeys?: (userId: string, version: number) => Promise<void>;
}

/** A fan-out stopped for time; the next arrival for the entity (a continuation, a redelivery) resumes it. */
export class FanOutIncomplete extends Error {
  constructor(readonly subject: string) {
    super(`fan-out of ${subject} stopped before the time limit; the next delivery resumes it`);
    this.name = 'FanOutIncomplete';
  }
}

export type SourceItem = Item & { pk: string; sk: string; type: string; version: number; deleted?: boolean; pending?: boolean; fanout?: boolean };

export class Settler {
  constructor(
    private readonly io: TableIO,
    private readonly deriver: Deriver,
    private readonly opts: SettleOptions = {},
  ) {}

  /**
   * Does what the stored item still owes, then clears its `pending`. False:
   * some unit was handed to a newer derivation, `pending` is left for a
   * settle that finishes every unit itself (file comment).
   *
   * `recovering`: the item was found pending, not just written by this
   * settle's caller, so its first settle may have died after a derived
   * item's write and before that write's feed entries. The derivations then
   * append every feed note they meet again (derivation.ts, writeListed): the
   * notes cost no write of their own on the way that does not die.
   */
  async settle(stored: SourceItem, recovering = false): Promise<boolean> {
    if (!stored.pending) return true;
    const r = recovering;
    let done = true;
    switch (stored.type) {
      case 'USER': {
        const userId = String(stored.user_id);
        if (stored.deleted) await this.opts.closeUserKeys?.(userId, stored.version);
        done = await this.fanOut(stored, (eventId) => (stored.deleted ? this.cascadeUser(eventId, userId, r) : this.deriver.refreshGuest(eventId, userId, r)));
        break;
      }
      case 'EVENT_SOURCE': {
        const eventId = String(stored.event_id);
        const creator = (stored as unknown as EventSourceItem).event?.creator_id;
        if (stored.deleted) await this.tombstoneRsvpsOf(eventId, stored.version);
        else if (creator && !(await this.liveUser(creator))) return this.tombstoneAndSettle(stored, r);
        // The event item first: hiding it hides the event from every route that starts from it.
        done = await this.deriver.deriveEvent(eventId, r);
        // A title edit shows nothing new on a guest's items; a deletion, a hide or a move does, on all of them.
        if (stored.deleted || stored.fanout) {
          const guests = await this.deriveGuestsOf(stored, creator, r);
          done = (await this.deriver.deriveEvent(eventId, r)) && guests && done;
        }
        break;
      }
      case 'RSVP_SOURCE': {
        const rsvp = (stored as unknown as RsvpSourceItem).rsvp;
        // The event's or the user's deletion may have read before this RSVP existed: it goes here then.
        if (!stored.deleted && rsvp && (await this.missingReference(rsvp))) return this.tombstoneAndSettle(stored, r);
        done = await this.deriver.refreshGuest(String(stored.event_id), String(stored.user_id), r);
        break;
      }
      default:
        throw new Error(`no follow-up is known for a ${stored.type} item`);
    }
    if (!done) return false;
    await this.clearPending(stored);
    return true;
  }

  /** The first reference of an RSVP that is unknown or deleted, or null. */
  async missingReference(rsvp: RsvpRecord): Promise<string | null> {
    const event = (await this.io.get(keys.eventSource(rsvp.event_id))) as EventSourceItem | undefined;
    if (!event?.event || event.deleted) return `event ${rsvp.event_id}`;
    if (!(await this.liveUser(rsvp.user_id))) return `user ${rsvp.user_id}`;
    return null;
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

  /**
   * Runs `each` for every event linked to the user, a chunk at a time, saving
   * the last finished event on the user's item so the next arrival resumes
   * there instead of starting over. Progress is saved only past chunks whose
   * every unit finished, so a resumed settle redoes a handed-off one.
   */
  private async fanOut(user: SourceItem, each: (eventId: string) => Promise<boolean>): Promise<boolean> {
    const userKey = keyOf(user);
    const after = typeof user.pending_after === 'string' ? user.pending_after : undefined;
    const links = (await this.io.queryAll({ pk: userKey[PK]!, prefix: LINK_PREFIX, after: after ? `${LINK_PREFIX}${after}` : undefined })) as { event_id: string }[];
    const chunk = Math.max(1, this.opts.fanOutConcurrency ?? 8);
    let done = true;
    for (let i = 0; i < links.length; i += chunk) {
      if (i > 0) this.checkTime(String(user.user_id));
      const part = links.slice(i, i + chunk);
      done = (await Promise.all(part.map((l) => each(l.event_id)))).every(Boolean) && done;
      if (done && i + chunk < links.length) {
        await this.io.updateIf(userKey, 'SET pending_after = :after', '#version = :v AND #pending = :true', { ':after': part[part.length - 1]!.event_id, ':v': user.version, ':true': true }, { '#pending': 'pending' });
      }
    }
    return done;
  }

  /**
   * Every guest's items of an event whose projection on them changed (or
   * that is gone), a chunk at a time with the last finished guest saved, like
   * a user's fan-out. The guests are every user with a derivation counter in
   * the event (whoever ever derived an item there has one), and the creator.
   * A guest derivation that takes its counter after this Query read it also
   * reads the event's source after it: it derives from the new state itself.
   */
  private async deriveGuestsOf(stored: SourceItem, creator: string | undefined, recovering: boolean): Promise<boolean> {
    const eventId = String(stored.event_id);
    const after = typeof stored.pending_after === 'string' ? stored.pending_after : undefined;
    // The creator's unit like any guest's: with its bucket's recount (deriveGuests), which its entry may need too.
    let done = creator && after === undefined ? await this.deriver.deriveGuests(eventId, [creator], recovering) : true;
    const counters = await this.io.queryAll({ pk: `EVENT#${eventId}`, prefix: GUEST_SEQ_PREFIX, after: after === undefined ? undefined : `${GUEST_SEQ_PREFIX}${after}` });
    const guests = counters.map((c) => String(c[SK]).slice(GUEST_SEQ_PREFIX.length)).filter((g) => g !== creator || after !== undefined);
    const chunk = Math.max(1, this.opts.fanOutConcurrency ?? 8);
    for (let i = 0; i < guests.length; i += chunk) {
      if (i > 0) this.checkTime(eventId);
      const part = guests.slice(i, i + chunk);
      done = (await this.deriver.deriveGuests(eventId, part, recovering)) && done;
      if (done && i + chunk < guests.length) {
        await this.io.updateIf(keyOf(stored), 'SET pending_after = :after', '#version = :v AND #pending = :true', { ':after': part[part.length - 1]!, ':v': stored.version, ':true': true }, { '#pending': 'pending' });
      }
    }
    return done;
  }

  /** One linked event of a deleted user: the event goes if the user created it (checked at the write), and the user's RSVP to it. */
  private async cascadeUser(eventId: string, userId: string, recovering: boolean): Promise<boolean> {
    let done = true;
    for (;;) {
      const source = (await this.io.get(keys.eventSource(eventId))) as (EventSourceItem & SourceItem) | undefined;
      if (source?.deleted && source.pending) done = (await this.settle(source, true)) && done;
      if (!source?.event || source.deleted || source.event.creator_id !== userId) break;
      if (await this.liveUser(userId)) return done; // re-created since: whoever re-created it settled this deletion first
      if (await this.tombstone(keys.eventSource(eventId), source.version)) {
        done = (await this.cascadeEvent(eventId, source.version, recovering)) && done;
        break;
      }
    }
    const rsvp = await this.io.get(keys.rsvpSource(eventId, userId));
    if (rsvp && !rsvp.deleted && !(await this.liveUser(userId))) await this.tombstone(keys.rsvpSource(eventId, userId), Number(rsvp.version), false);
    return (await this.deriver.refreshGuest(eventId, userId, recovering)) && done;
  }

  /** A pending live item whose parent is gone: it becomes a tombstone (this exact version), then whatever is stored is settled. */
  private async tombstoneAndSettle(stored: SourceItem, recovering: boolean): Promise<boolean> {
    await this.tombstone(keyOf(stored), stored.version);
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
  private async tombstoneRsvpsOf(eventId: string, version: number): Promise<void> {
    const live = ((await this.io.queryAll({ pk: `EVENT#${eventId}`, prefix: RSVP_SOURCE_PREFIX })) as SourceItem[]).filter((s) => !s.deleted);
    // A chunk at a time, like a user's fan-out: a big event's RSVPs outlast no invocation (the tombstones are the progress).
    const chunk = Math.max(1, this.opts.fanOutConcurrency ?? 8);
    for (let i = 0; i < live.length; i += chunk) {
      if (i > 0) this.checkTime(eventId);
      const event = await this.io.get(keys.eventSource(eventId));
      if (!event?.deleted || event.version !== version) return;
      await Promise.all(live.slice(i, i + chunk).map((s) => this.tombstoneRsvp(eventId, version, s)));
    }
  }

  /** One RSVP of an event deleted at `version`, at the version read (read again, and the event again, on a conflict). */
  private async tombstoneRsvp(eventId: string, version: number, first: SourceItem): Promise<void> {
    let s: SourceItem | undefined = first;
    while (s && !s.deleted) {
      if (await this.tombstone(keyOf(s), s.version, false)) return;
      s = (await this.io.get(keyOf(s))) as SourceItem | undefined;
      const event = await this.io.get(keys.eventSource(eventId));
      if (!event?.deleted || event.version !== version) return;
    }
  }

  private checkTime(subject: string): void {
    if (this.opts.remainingMs && this.opts.remainingMs() < (this.opts.reserveMs ?? 10_000)) throw new FanOutIncomplete(subject);
  }

  /**
   * Turns a live source item into a tombstone that keeps its version: only
   * the exact version the decision was made on; false when that version is no
   * longer there. It owes its own follow-up (`pending`) unless the caller's
   * pending item covers it (an RSVP whose event the caller derives next).
   */
  private async tombstone(key: Key, version: number, owesFollowUp = true): Promise<boolean> {
    // A dependent whose follow-up the caller does (it derives the event next) owes nothing of its own, even if it was
    // still settling as a live item: that settle's work is moot now, and its clearing no longer matches.
    const done = await this.io.updateIf(key, `SET #deleted = :true${owesFollowUp ? ', #pending = :true' : ''} REMOVE #user, #event, #rsvp${owesFollowUp ? '' : ', #pending'}`, '#version = :v AND attribute_not_exists(#deleted)', { ':v': version, ':true': true }, {
      '#user': 'user',
      '#event': 'event',
      '#rsvp': 'rsvp',
      '#deleted': 'deleted',
      '#pending': 'pending',
    });
    return done !== undefined;
  }
}

function keyOf(item: Item): Key {
  return { [PK]: String(item[PK]), [SK]: String(item[SK]) };
}
