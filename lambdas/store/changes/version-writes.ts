/**
 * How a derivation writes one version of a derived item, and what that
 * version then owes (docs/data-model.md, "Write side" and "Changes feeds").
 *
 * - A reveal's mark: `revealing` set to the derivation's token on the item as
 *   it is (content, stamp and notes untouched), or a marked tombstone where
 *   there is nothing. Unconditional: a mark only ever makes the next
 *   derivation rewrite the item.
 * - Items that may be listed (the event, profile entries) or that a feed
 *   shows (RSVP items) are written conditional on the very version read (its
 *   stamp and mark), re-read on a conflict. The version written records
 *   where its tally entry was (`tally_from`, `tally_pending`) and the feed
 *   scopes it must be appended to (`feed_note`), so a crash after the write
 *   leaves notes that the next derivation finishes. A newer derivation's
 *   version stands; this derivation's own version, found after a lost
 *   response, is finished like one it just wrote.
 * - Other derived items (count entries) only over nothing, an unstamped
 *   load, or an older stamp.
 *
 * What a version owes once written (`finish`): its feeds (membership, then
 * entries: feed.ts), its tally move (tally-moves.ts), then its notes cleared.
 * A tombstone has no expiry until both are done: TTL deletes what is marked.
 * The feed note of a live item is never cleared by a write of its own: it is
 * owed only while the source item whose settle wrote it is still `pending`,
 * and a settle of such a source re-derives the unit and appends every note it
 * meets again (`recovering`, `finishNote`). A version that moves its tally
 * entry (every event item that leaves a scope does) writes its whole note
 * and clears it with its tally note, so a live note that stays names only
 * scopes its item shows.
 */
import type { Clock } from '../../core/clock.js';
import { keyOf, noteOf, withoutNote, isFedKey, isListedKey } from './derivation-plan.js';
import { FEED_NOTE, FEED_SHARDS, FeedWriter, MAX_CHUNK_ENTRIES, MAX_TAIL_ENTRIES, PendingFlushes, TAIL_FLUSH_BYTES, scopesToAppend } from '../feeds/feed.js';
import type { Item, Key, TableIO } from '../table/table-io.js';
import { SK, TTL_ATTRIBUTE } from '../table/table.js';
import { sameTallyKey, tallyKeyOf, type TallyKey } from '../table/tally.js';
import type { Move, TallyBatch, TallyMoves } from './tally-moves.js';
import { all } from '../table/waves.js';

/**
 * How long a derived tombstone is kept once nothing is owed on it: far longer
 * than any derivation runs. One that owes a tally move or feed entries has no
 * expiry until they are written.
 */
const TOMBSTONE_TTL_SECONDS = 86_400;
/** A derived item or tally entry's write: only over nothing, an unstamped load, or an older derivation's. */
const OLDER_OR_ABSENT = 'attribute_not_exists(#pk) OR attribute_not_exists(gen) OR gen < :gen';

/** One version written, and what it owes. */
export interface Written {
  version: Item;
  /** The scopes computed against the version it replaced (its entries). */
  feeds: string[];
  replaced: Item | undefined;
}

export class VersionWriter {
  private readonly feeds: FeedWriter;
  /** The flushes its appends set off, which the change waits for only before it answers (feed-append.ts). */
  readonly flushes = new PendingFlushes();

  constructor(
    private readonly io: TableIO,
    private readonly clock: Clock,
    private readonly moves: TallyMoves,
  ) {
    this.feeds = new FeedWriter(io, clock, TAIL_FLUSH_BYTES, MAX_CHUNK_ENTRIES, MAX_TAIL_ENTRIES, FEED_SHARDS, this.flushes);
  }

  /** A reveal's first step: the item as it is, carrying `token`; a marked tombstone where there is nothing. Answers the marked version. */
  mark(key: Key, token: string): Promise<Item> {
    return this.io.update(key, 'SET revealing = :token, #type = if_not_exists(#type, :tomb)', { ':token': token, ':tomb': 'TOMBSTONE' });
  }

  /** A plain derived item (a count entry): true when it landed. */
  async writePlain(want: Item, gen: number): Promise<boolean> {
    return this.io.putIf(this.stamp(want, gen), OLDER_OR_ABSENT, { ':gen': gen });
  }

  /**
   * A listed or fed item's write, conditional on the version `have` read.
   * Answers the version written (or found written by this derivation after a
   * lost response), or undefined when a newer derivation's version stands.
   * Notes met on the way are finished first (a tally move left by a crash;
   * with `recovering`, a feed note).
   */
  async writeVersion(want: Item, gen: number, have: Item | undefined, recovering: boolean): Promise<Written | undefined> {
    const key = keyOf(want);
    let current = have;
    for (;;) {
      if (typeof current?.gen === 'number' && current.gen >= gen) return undefined; // a newer derivation's version stands
      if (current) current = await this.finishNotes(current, recovering);
      const from = tallyKeyOf(current);
      const moves = !sameTallyKey(from, tallyKeyOf(want));
      // The feeds this version changes, computed against the exact version it replaces (the write is conditional on it).
      const feeds = scopesToAppend(current, want);
      const note = [...new Set([...feeds, ...noteOf(current)])];
      const item: Item = { ...this.stamp(want, gen), ...(moves ? { tally_pending: true, ...(from ? { tally_from: from } : {}) } : {}), ...(note.length ? { [FEED_NOTE]: note } : {}) };
      if (moves || (item.type === 'TOMBSTONE' && note.length)) delete item[TTL_ATTRIBUTE];
      if (await this.io.putIf(item, ...exactly(current))) return { version: item, feeds, replaced: current };
      const again = await this.io.get(key);
      // This very write landed and its response was lost (the SDK's retry failed the condition): finish its work.
      if (again?.gen === gen && again.revealing === undefined) return { version: again, feeds, replaced: current };
      // Otherwise another derivation wrote: a newer one's word stands (above), an older one's is read again.
      current = again;
    }
  }

  /**
   * What a written version owes: its feeds and its tally move at once, then
   * its notes cleared (a tombstone's whole note, carried scopes included, is
   * appended first, and it gets its expiry in the same write). `batch`: the
   * batch its move was declared to (tally-moves.ts); without one it moves
   * alone.
   */
  async finish({ version, feeds, replaced }: Written, batch?: TallyBatch): Promise<void> {
    const note = noteOf(version);
    // The whole note is written and cleared by a tombstone, and by a version whose tally note is cleared anyway (one
    // write, no extra one). Every event item that leaves a scope moves its tally entry (a hide leaves its list, a new
    // host is another list), so a live note that stays names only scopes its item shows: carried into later versions,
    // it never sends a former host or a left catalogue `removed` again when a deletion or a recovering settle meets it
    // (test/integration/feed-note-carry.test.ts).
    const retire = (version.type === 'TOMBSTONE' || !!version.tally_pending) && note.length > 0;
    const gen = Number(version.gen);
    const moved = !version.tally_pending ? Promise.resolve() : batch ? batch.settled() : this.moves.alone(moveOf(version));
    // A scope the replaced version still owed (its note: its own membership and entry may never have been written,
    // e.g. its writer's response was lost and it then found this version) is not known from it: written as this
    // version shows it (found by the deep exploration: a rename's version replaced an RSVP's unfinished reveal, and
    // the guest was left out of its guest feed's member list for good).
    const owed = noteOf(replaced);
    await all([this.feeds.record(version, retire ? note : feeds, { item: replaced, scopes: feeds.filter((scope) => !owed.includes(scope)) }), moved]);
    if (version.tally_pending) await this.clearTallyNote(version, retire);
    else if (retire) await this.io.updateIf(keyOf(version), 'REMOVE #note SET #ttl = :expires', 'gen = :gen', { ':gen': gen, ':expires': this.expiry() }, { '#ttl': TTL_ATTRIBUTE, '#note': FEED_NOTE });
  }

  /** Notes an item carries from a derivation that stopped: its tally move, and (recovering) its feed note. Answers the item as it then is. */
  async finishNotes(item: Item, recovering: boolean): Promise<Item> {
    let current = item;
    if (recovering && noteOf(current).length) {
      await this.finishFeedNote(current);
      current = withoutNote(current);
    }
    if (current.tally_pending) {
      await this.moves.alone(moveOf(current));
      await this.clearTallyNote(current, false);
      const { tally_pending: _pending, tally_from: _from, ...rest } = current;
      current = rest;
    }
    return current;
  }

  /** Whether a derived item is written as a version (listed or fed), not plainly. */
  static isVersioned(key: Key): boolean {
    return isListedKey(String(key[SK])) || isFedKey(String(key[SK]));
  }

  /**
   * The end of a tally move: its note cleared, conditional on this version (a
   * newer one keeps its own), and with `retireNote` (its whole feed note
   * written) the feed note too. A tombstone expires only once nothing is owed
   * on it: a feed note still there belongs to a pending source's settle
   * (unless retired here, its entries written).
   */
  private async clearTallyNote(version: Item, retireNote: boolean): Promise<void> {
    const gen = Number(version.gen);
    const note: Record<string, string> = retireNote ? { '#note': FEED_NOTE } : {};
    if (version.type === 'TOMBSTONE' && (retireNote || !noteOf(version).length)) {
      await this.io.updateIf(keyOf(version), `REMOVE tally_pending, tally_from${retireNote ? ', #note' : ''} SET #ttl = :expires`, 'gen = :gen', { ':gen': gen, ':expires': this.expiry() }, { '#ttl': TTL_ATTRIBUTE, ...note });
    } else {
      await this.io.updateIf(keyOf(version), `REMOVE tally_pending, tally_from${retireNote ? ', #note' : ''}`, 'gen = :gen', { ':gen': gen }, note);
    }
  }

  /**
   * A recovering settle's finish of a feed note it meets: records every scope
   * it names again (membership as this version shows it, then an entry),
   * then clears it, conditional on this version (one a load or a resync wrote
   * has no stamp). Idempotent: an entry more only says "look again". A
   * tombstone gets its day's expiry here unless its tally move still owes.
   */
  private async finishFeedNote(version: Item): Promise<void> {
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

  stamp(item: Item, gen: number): Item {
    const { revealing: _mark, ...rest } = item;
    return { ...rest, gen, ...(item.type === 'TOMBSTONE' ? { [TTL_ATTRIBUTE]: this.expiry() } : {}) };
  }

  expiry(seconds = TOMBSTONE_TTL_SECONDS): number {
    return Math.floor(this.clock().getTime() / 1000) + seconds;
  }
}

/** The tally move a version records: from its note's entry to the one it is listed at now. */
export function moveOf(version: Item): Move {
  return { from: (version.tally_from as TallyKey | undefined) ?? null, to: tallyKeyOf(version), eventId: String(version.event_id), gen: Number(version.gen) };
}

/** The condition that the item is exactly the version read: absent, or its stamp (or none) and its mark (or none). */
function exactly(current: Item | undefined): [string, Record<string, unknown>] {
  if (current === undefined) return ['attribute_not_exists(#pk)', {}];
  const stamp = typeof current.gen === 'number' ? 'gen = :was' : 'attribute_exists(#pk) AND attribute_not_exists(gen)';
  const mark = current.revealing === undefined ? 'attribute_not_exists(revealing)' : 'revealing = :mark';
  return [`${stamp} AND ${mark}`, { ...(typeof current.gen === 'number' ? { ':was': current.gen } : {}), ...(current.revealing === undefined ? {} : { ':mark': current.revealing }) }];
}

