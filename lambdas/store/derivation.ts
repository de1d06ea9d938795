/**
 * The derivation engine: makes derived items equal to what derive.ts — the
 * full load's own derivation — gives for their stored sources, under any
 * number of concurrent appliers and crashes (docs/data-model.md, "Write
 * side").
 *
 * It works on *units*, each with its own counter and its own items, so that
 * a change derives only what it touches:
 * - an event's unit: the event item (counter `SEQ`), from the event's source,
 *   its creator and the guest-count summaries;
 * - a guest's unit: one user's RSVP item, count entry and profile entry in
 *   one event (counter `SEQ#{userId}`), from the event's source, the RSVP's
 *   source and the user.
 * No item belongs to two units, so the `gen` stamps on an item always come
 * from one counter and compare.
 *
 * One derivation of a unit:
 * 1. Take the next number `gen` of the unit's counter, then read (consistent)
 *    its sources and current items. A derivation that finds a newer number
 *    taken leaves the work to it (the newer one reads every source write
 *    this one was started for) and answers that it handed off: the newer
 *    derivation may belong to an applier that dies, so the caller keeps its
 *    `pending` until a derivation of its own finishes (settle.ts).
 * 2. Write only what differs, each item stamped `gen` and conditional on an
 *    older stamp, in three groups:
 *    - hiding writes first (tombstones, removed index keys), so no moment
 *      shows a copy the change removed;
 *    - plain writes (content at the same place);
 *    - reveals (a new or changed index key: an item becomes reachable
 *      somewhere) in three steps: mark the item (`revealing = gen`, stamped),
 *      read the counter, and write the item only if no newer derivation has
 *      started, conditional on the mark. A newer derivation that started
 *      after the check reads the mark (a marked item differs from every
 *      target, so it always rewrites it, which voids the reveal); one that
 *      started before the check voids it at the check. So a derivation that
 *      has finished can never be followed by an older one's reveal: a
 *      completed hide stays hidden, whoever dies when.
 * 3. Read the counter again: a newer derivation that started while this one
 *    wrote may have read before these writes landed, so derive again.
 *
 * Every conditional write recognises its own landed write when its response
 * was lost and the SDK's retry then failed the condition: `gen` is unique to
 * one derivation, so an item stamped with this derivation's `gen` (and this
 * derivation's mark, or none) is this derivation's write.
 *
 * Items that may be listed (the event, profile entries) are written
 * conditional on the exact version read and move their tally entry when
 * their list key changes (writeListed, finishTally).
 */
import { TTL_ATTRIBUTE, DERIVED_SORT_KEYS, GUEST_COUNT_SUMMARY_PREFIX, INDEXES, PK, SK, countBucket, keys } from './table.js';
import { GuestCountRecounter } from './guest-counts.js';
import { deriveEventItem, deriveGuestItems, sumCounts } from './derive.js';
import type { EventSourceItem, GuestCounts, RsvpSourceItem, TableItem, UserItem } from './items.js';
import { sameContent } from './item-content.js';
import { keyString, type Item, type Key, type TableIO } from './table-io.js';
import { sameTallyKey, tallyEntry, tallyKeyOf, type TallyKey } from './tally.js';
import { TallyRecounter } from './tally-recount.js';
import { FEED_NOTE, FeedWriter, scopesToAppend } from './feed.js';
import type { Clock } from '../core/clock.js';

/**
 * How long a derived tombstone is kept once nothing is owed on it: far longer
 * than any derivation runs. One that owes a tally move or feed entries has no
 * expiry until they are written (TTL deletes what is marked, any time after).
 */
const TOMBSTONE_TTL_SECONDS = 86_400;
const MAX_DERIVATION_ROUNDS = 25;
const INDEX_ATTRIBUTES = Object.values(INDEXES).flatMap((i) => [i.partitionKey, i.sortKey]);
/** A derived item or tally entry's write: only over nothing, an unstamped load, or an older derivation's. */
const OLDER_OR_ABSENT = 'attribute_not_exists(#pk) OR attribute_not_exists(gen) OR gen < :gen';

type Kind = 'hide' | 'plain' | 'reveal';

export class Deriver {
  /** Events derived since the last reset. */
  derivations = 0;
  private readonly tallies: TallyRecounter;
  private readonly counts: GuestCountRecounter;
  private readonly feeds: FeedWriter;

  constructor(
    private readonly io: TableIO,
    private readonly clock: Clock,
    private readonly writeConcurrency = 16,
  ) {
    this.tallies = new TallyRecounter(io.client, io.tableName, () => io.writes++);
    this.counts = new GuestCountRecounter(io);
    this.feeds = new FeedWriter(io, clock);
  }

  /**
   * Everything one user's change in one event owes: the user's items there
   * and the recount of their count bucket (deriveGuests), then the event
   * item (its counts, and the creator snapshot when the user created it).
   * Always all of it: a crash after the count entry and before the recount
   * must be finished by a repeat that finds the entry already right.
   */
  async refreshGuest(eventId: string, userId: string, recovering = false): Promise<boolean> {
    const guest = await this.deriveGuests(eventId, [userId], recovering);
    return (await this.deriveEvent(eventId, recovering)) && guest;
  }

  /**
   * Derives the guest units of these users in one event (at once), then
   * recounts each of their count buckets once. The only way in to a guest
   * unit's derivation, so that every count entry a derivation may have
   * written is followed by its bucket's recount, whoever asks and whatever
   * else they derive (invariant of guest-counts.ts: whoever changed an entry
   * recounts after the change). A caller that derived a unit and recounted
   * only the buckets it thought were touched lost a count for good: an event
   * moved to a host whose RSVP had derived nothing (the old host was deleted)
   * derived the new host's entry as the creator's and recounted only the
   * other guests' buckets (test/integration/write-side-triples.test.ts, G1).
   * False: some unit was handed off (derive); the buckets are recounted all
   * the same, and the caller keeps `pending` (settle.ts).
   * The caller derives the event item after (its counts read the summaries).
   * `recovering`: as deriveEvent's.
   */
  async deriveGuests(eventId: string, userIds: readonly string[], recovering = false): Promise<boolean> {
    const done = (await Promise.all(userIds.map((u) => this.deriveGuest(eventId, u, recovering)))).every(Boolean);
    for (const bucket of new Set(userIds.map(countBucket))) await this.counts.recount(eventId, bucket);
    return done;
  }

  /**
   * Re-derives an event's own item (public fields, creator snapshot, guest counts) from its sources; false: handed off (derive).
   * `recovering`: the settle of a source item found pending, whose derivations may have died before their feed entries.
   */
  async deriveEvent(eventId: string, recovering = false): Promise<boolean> {
    const own = [keys.event(eventId)];
    return this.derive(keys.derivationSeq(eventId), own, async () => {
      const got = await this.io.getMany([keys.eventSource(eventId), keys.derivationSeq(eventId), ...own]);
      const source = got.get(keyString(keys.eventSource(eventId))) as EventSourceItem | undefined;
      const event = source && !source.deleted ? source.event : undefined;
      const summaries = event ? await this.io.queryAll({ pk: `EVENT#${eventId}`, prefix: GUEST_COUNT_SUMMARY_PREFIX }) : [];
      const creator = event ? await this.liveUser(event.creator_id) : undefined;
      return { got, target: deriveEventItem({ event, creator, counts: sumCounts(summaries as Partial<GuestCounts>[]) }) };
    }, recovering);
  }

  /** Re-derives one user's items in one event (RSVP item, count entry, profile entry) from their sources; false: handed off (derive). Private: deriveGuests recounts after it. */
  private async deriveGuest(eventId: string, userId: string, recovering = false): Promise<boolean> {
    const own = [keys.rsvp(eventId, userId), keys.guestCount(eventId, userId), keys.profileEntry(eventId, userId)];
    return this.derive(keys.guestSeq(eventId, userId), own, async () => {
      const got = await this.io.getMany([keys.eventSource(eventId), keys.rsvpSource(eventId, userId), keys.guestSeq(eventId, userId), keys.user(userId), ...own]);
      const source = got.get(keyString(keys.eventSource(eventId))) as EventSourceItem | undefined;
      const event = source && !source.deleted ? source.event : undefined;
      const rsvpSource = got.get(keyString(keys.rsvpSource(eventId, userId))) as RsvpSourceItem | undefined;
      const userItem = got.get(keyString(keys.user(userId))) as UserItem | undefined;
      const user = userItem && !userItem.deleted ? userItem.user : undefined;
      const creator = !event ? undefined : event.creator_id === userId ? user : await this.liveUser(event.creator_id);
      return { got, target: deriveGuestItems({ event, creator, rsvp: rsvpSource && !rsvpSource.deleted ? rsvpSource.rsvp : undefined, user }) };
    }, recovering);
  }

  /**
   * One unit's derivation (steps 1–3 of the file comment): `read` runs after
   * the number is taken and answers every item it read (the counter and the
   * unit's own items among them) and the unit's target items.
   *
   * Answers true when this derivation finished as the unit's newest (its
   * items are what the sources it read give, and no newer derivation had
   * started), false when it handed the unit to a newer number: whoever
   * settles must then not clear `pending` on its word (settle.ts).
   */
  private async derive(seqKey: Key, own: readonly Key[], read: () => Promise<{ got: Map<string, Item>; target: TableItem[] }>, recovering: boolean): Promise<boolean> {
    this.derivations++;
    for (let round = 0; round < MAX_DERIVATION_ROUNDS; round++) {
      const gen = await this.io.increment(seqKey, 'seq', 'DERIVATION_SEQ');
      const { got, target: targetItems } = await read();
      if (Number(got.get(keyString(seqKey))?.seq) > gen) return false;

      const existing = new Map(own.flatMap((k) => (got.has(keyString(k)) ? [[k[SK]!, got.get(keyString(k))!] as const] : [])));
      // A derivation that stopped between an item and its tally entry: finish that first. A feed note is owed only
      // while a source that derived it is pending: a recovering settle appends it again (finishFeed).
      for (const have of existing.values()) {
        if (recovering && noteOf(have).length) {
          await this.finishFeed(have);
          delete have[FEED_NOTE];
        }
        if (!have.tally_pending) continue;
        await this.finishTally(have);
        delete have.tally_pending;
      }
      const target = new Map(targetItems.map((i) => [i.sk, i as unknown as Item]));
      const plan: Record<Kind, { want: Item; have: Item | undefined }[]> = { hide: [], plain: [], reveal: [] };
      for (const { [PK]: pk, [SK]: sk } of own) {
        const have = existing.get(sk!);
        // Where nothing is wanted: a tombstone over a live item, and over another derivation's mark (voiding its reveal).
        const want = target.get(sk!) ?? (have && (have.type !== 'TOMBSTONE' || have.revealing !== undefined) ? { [PK]: pk, [SK]: sk, type: 'TOMBSTONE' } : undefined);
        if (!want || (have && sameContent(have, want))) continue;
        plan[kindOf(have, want)].push({ want, have });
      }
      if (!plan.hide.length && !plan.plain.length && !plan.reveal.length) return true;
      await this.each(plan.hide, (w) => this.write(w.want, gen, w.have, recovering));
      await this.each(plan.plain, (w) => this.write(w.want, gen, w.have, recovering));
      if (plan.reveal.length) {
        const marked: { want: Item; have: Item }[] = [];
        await this.each(plan.reveal, async (w) => {
          const have = await this.mark(w.want, gen, w.have);
          if (have) marked.push({ want: w.want, have });
        });
        // Only the newest derivation reveals; a newer one has seen (or will see) the marks and decides.
        const newest = Number((await this.io.get(seqKey))?.seq) === gen;
        if (marked.length && newest) await this.each(marked, (w) => this.write(w.want, gen, w.have, recovering));
        // A round that only marked changed no content: a newer derivation reveals what is due, so this one may stop.
        // (Deriving again here is how derivations racing to reveal once chased each other's numbers without end.)
        if (!newest && !plan.hide.length && !plan.plain.length) return false;
      }
      if (Number((await this.io.get(seqKey))?.seq) === gen) return true;
    }
    throw new Error(`derivation of ${seqKey[PK]} ${seqKey[SK]} did not settle after ${MAX_DERIVATION_ROUNDS} rounds`);
  }

  private async liveUser(userId: string) {
    return (await this.io.users([userId])).get(userId);
  }

  private async each<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
    const queue = [...items];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await work(next);
    };
    await Promise.all(Array.from({ length: Math.max(1, this.writeConcurrency) }, worker));
  }

  /**
   * Step one of a reveal: stamps `gen` and the mark on the item as it is
   * (content, index keys and tally note untouched), or puts a marked
   * tombstone where there is none. Answers the marked version, or undefined
   * when a newer derivation's word already stands there.
   */
  private async mark(want: Item, gen: number, have: Item | undefined): Promise<Item | undefined> {
    const key: Key = { [PK]: String(want[PK]), [SK]: String(want[SK]) };
    let current = have;
    for (;;) {
      if (current === undefined) {
        const stub = await this.io.updateIf(key, 'SET #type = :tomb, gen = :gen, revealing = :gen, #ttl = :ttl', 'attribute_not_exists(#pk)', { ':tomb': 'TOMBSTONE', ':gen': gen, ':ttl': this.expiry() }, { '#type': 'type', '#ttl': TTL_ATTRIBUTE });
        if (stub) return stub;
      } else {
        // This derivation's own mark: a retried mark whose first attempt landed (its response lost) fails its condition.
        if (isMarkedBy(current, gen)) return current;
        if (typeof current.gen === 'number' && current.gen >= gen) return undefined;
        const marked = await this.io.updateIf(key, 'SET gen = :gen, revealing = :gen', 'attribute_exists(#pk) AND (attribute_not_exists(gen) OR gen < :gen)', { ':gen': gen });
        if (marked) return marked;
      }
      current = await this.io.get(key);
    }
  }

  /** One derived item's write (a reveal's last step when `have` carries this derivation's mark). */
  private async write(want: Item, gen: number, have: Item | undefined, recovering: boolean): Promise<void> {
    if (isListedKey(String(want[SK])) || isFedKey(String(want[SK]))) return this.writeListed(want, gen, have, recovering);
    const ours = isMarkedBy(have, gen);
    await this.io.putIf(this.stamp(want, gen), ours ? 'gen = :gen AND revealing = :gen' : OLDER_OR_ABSENT, { ':gen': gen });
  }

  /**
   * An item that may be in a list (the event, a profile entry) also moves its
   * tally entry when its list key changes. To know exactly which entry the
   * table had, the write is conditional on the very version read (its stamp
   * and mark), and re-reads on a conflict; the version written records where
   * the entry was (`tally_from`) with `tally_pending`, so a crash between the
   * item and its entry leaves a note the next derivation finishes.
   *
   * The same write carries the version's feed note (the scopes it is appended
   * to, after it lands) at no cost of its own: on a live item the note is
   * never cleared by a write of its own. Its scopes are owed only while the
   * source item whose settle wrote it is still `pending` (its applier may
   * have died before the entries): a settle of a pending source found stored
   * re-derives the same units and appends every note it meets again
   * (`recovering`; an entry more only says "look again"). So a later version
   * carries the note of the one it replaces, and a recovering settle finishes
   * it wherever it is. A tombstone is the exception: it would expire with
   * its note, so it has no expiry until its whole note (carried scopes
   * included) is appended, and then the note is cleared (finishVersion).
   */
  private async writeListed(want: Item, gen: number, have: Item | undefined, recovering: boolean): Promise<void> {
    const key: Key = { [PK]: String(want[PK]), [SK]: String(want[SK]) };
    let current = have;
    for (;;) {
      const ours = isMarkedBy(current, gen);
      if (!ours && typeof current?.gen === 'number' && current.gen >= gen) return; // a newer derivation's word stands
      if (recovering && current && noteOf(current).length) {
        await this.finishFeed(current);
        current = withoutNote(current);
      }
      if (current?.tally_pending) await this.finishTally(current);
      const from = tallyKeyOf(current);
      const moves = !sameTallyKey(from, tallyKeyOf(want));
      // The feeds this version changes, computed against the exact version it replaces (the write is conditional on it).
      const feeds = scopesToAppend(current, want);
      const note = [...new Set([...feeds, ...noteOf(current)])];
      const item: Item = {
        ...this.stamp(want, gen),
        ...(moves ? { tally_pending: true, ...(from ? { tally_from: from } : {}) } : {}),
        ...(note.length ? { [FEED_NOTE]: note } : {}),
      };
      if (moves || (item.type === 'TOMBSTONE' && note.length)) delete item[TTL_ATTRIBUTE];
      const replaced = current;
      const written =
        current === undefined
          ? await this.io.putIf(item, 'attribute_not_exists(#pk)')
          : typeof current.gen === 'number'
            ? await this.io.putIf(item, current.revealing === undefined ? 'gen = :was AND attribute_not_exists(revealing)' : 'gen = :was AND revealing = :mark', {
                ':was': current.gen,
                ...(current.revealing === undefined ? {} : { ':mark': current.revealing }),
              })
            : await this.io.putIf(item, 'attribute_exists(#pk) AND attribute_not_exists(gen)');
      if (written) return this.finishVersion(item, feeds, replaced);
      current = await this.io.get(key);
      // This very write landed and its response was lost (the SDK's retry failed the condition): finish its work.
      if (current?.gen === gen && current.revealing === undefined) return this.finishVersion(current, feeds, replaced);
      // Otherwise another derivation wrote: a newer one's word stands (the loop's first check), an older one's is read again.
    }
  }

  /**
   * What a version owes once written: its feeds (membership, then entries),
   * its tally move. A tombstone appends its whole note (the scopes carried
   * from earlier versions too) and only then clears it and gets its expiry,
   * in the same write as the end of its tally move.
   */
  private async finishVersion(version: Item, feeds: readonly string[], replaced: Item | undefined): Promise<void> {
    const note = noteOf(version);
    const retire = version.type === 'TOMBSTONE' && note.length > 0;
    await this.feeds.record(version, retire ? note : feeds, { item: replaced, scopes: feeds });
    if (version.tally_pending) await this.finishTally(version, retire);
    else if (retire) await this.io.updateIf(keyOf(version), 'REMOVE #note SET #ttl = :expires', 'gen = :gen', { ':gen': version.gen, ':expires': this.expiry() }, { '#ttl': TTL_ATTRIBUTE, '#note': FEED_NOTE });
  }

  /**
   * Finishes the tally move of one version of a listed item: the entry where
   * it was becomes a tombstone and the entry where it is now is written (both
   * stamped with the version's `gen`, so an older move cannot undo a newer
   * one), the summaries of both are recounted, and the note is cleared.
   * Idempotent: any number of derivations may finish the same move.
   */
  private async finishTally(version: Item, retireNote = false): Promise<void> {
    const gen = Number(version.gen);
    const from = version.tally_from as TallyKey | undefined;
    const to = tallyKeyOf(version);
    if (from && !sameTallyKey(from, to)) await this.io.putIf(this.stamp({ [PK]: from.pk, [SK]: from.sk, type: 'TOMBSTONE' }, gen), OLDER_OR_ABSENT, { ':gen': gen });
    if (to) await this.io.putIf({ ...(tallyEntry(to, String(version.event_id)) as unknown as Item), gen }, OLDER_OR_ABSENT, { ':gen': gen });
    await this.tallies.recount([from, to].filter((k): k is TallyKey => !!k));
    // Conditional on this version: a newer one that replaced it keeps its own note. A tombstone expires only once
    // nothing is owed on it: a feed note still there belongs to a pending source's settle (unless retired here).
    if (version.type === 'TOMBSTONE' && (retireNote || !noteOf(version).length)) {
      await this.io.updateIf(keyOf(version), `REMOVE tally_pending, tally_from${retireNote ? ', #note' : ''} SET #ttl = :expires`, 'gen = :gen', { ':gen': gen, ':expires': this.expiry() }, {
        '#ttl': TTL_ATTRIBUTE,
        ...(retireNote ? { '#note': FEED_NOTE } : {}),
      });
    } else {
      await this.io.updateIf(keyOf(version), 'REMOVE tally_pending, tally_from', 'gen = :gen', { ':gen': gen });
    }
  }

  /**
   * A recovering settle's finish of a note it meets (writeListed): records
   * every scope it names again (membership as this version shows it, then an
   * entry), then clears it, conditional on this version (one a load or a
   * resync wrote has no stamp). Idempotent: an entry more only says "look
   * again". A tombstone gets its day's expiry here unless its tally move
   * still owes.
   */
  private async finishFeed(version: Item): Promise<void> {
    await this.feeds.record(version, noteOf(version));
    const stamped = typeof version.gen === 'number';
    const condition = stamped ? 'gen = :gen' : 'attribute_exists(#pk) AND attribute_not_exists(gen)';
    const values = stamped ? { ':gen': version.gen } : {};
    if (version.type === 'TOMBSTONE' && !version.tally_pending) {
      await this.io.updateIf(keyOf(version), 'REMOVE #note SET #ttl = :expires', condition, { ...values, ':expires': this.expiry() }, { '#ttl': TTL_ATTRIBUTE, '#note': FEED_NOTE });
    } else {
      await this.io.updateIf(keyOf(version), 'REMOVE #note', condition, values, { '#note': FEED_NOTE });
    }
  }

  private stamp(item: Item, gen: number): Item {
    const { revealing: _mark, ...rest } = item;
    return { ...rest, gen, ...(item.type === 'TOMBSTONE' ? { [TTL_ATTRIBUTE]: this.expiry() } : {}) };
  }

  private expiry(seconds = TOMBSTONE_TTL_SECONDS): number {
    return Math.floor(this.clock().getTime() / 1000) + seconds;
  }
}

/** Reveal when the item gets an index key it did not have; hide when it loses one it had. */
function kindOf(have: Item | undefined, want: Item): Kind {
  if (want.type !== 'TOMBSTONE' && INDEX_ATTRIBUTES.some((a) => want[a] !== undefined && want[a] !== have?.[a])) return 'reveal';
  if (want.type === 'TOMBSTONE' || INDEX_ATTRIBUTES.some((a) => have?.[a] !== undefined && want[a] !== have[a])) return 'hide';
  return 'plain';
}

const isMarkedBy = (item: Item | undefined, gen: number): boolean => item?.gen === gen && item.revealing === gen;

const noteOf = (item: Item | undefined): string[] => (Array.isArray(item?.[FEED_NOTE]) ? (item[FEED_NOTE] as string[]) : []);

const keyOf = (item: Item): Key => ({ [PK]: String(item[PK]), [SK]: String(item[SK]) });

function withoutNote(item: Item): Item {
  const { [FEED_NOTE]: _note, ...rest } = item;
  return rest;
}

/** Derived items a changes feed shows (RSVP items), written like listed items so a feed note is never overwritten unfinished. */
function isFedKey(sk: string): boolean {
  return sk.startsWith(DERIVED_SORT_KEYS.rsvpPrefix);
}

/** Derived items that may be listed in user-events-index, and so carry a tally entry. */
function isListedKey(sk: string): boolean {
  return sk === DERIVED_SORT_KEYS.event || sk.startsWith(DERIVED_SORT_KEYS.profilePrefix);
}


