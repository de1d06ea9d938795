/**
 * The derivation engine: makes one event's derived items (event item, RSVP
 * items, profile entries, their tally entries) equal to what derive.ts — the
 * full load's own derivation — gives for the event's stored sources, under
 * any number of concurrent appliers and crashes (docs/data-model.md, "Write
 * side").
 *
 * 1. Take the next number `gen` of the event's counter, then read the event's
 *    partition (sources and derived items, one consistent Query) and users.
 *    A derivation that finds a newer number taken leaves the work to it: the
 *    newer one reads every source write this one was started for.
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
 * Items that may be listed (the event, profile entries) are written
 * conditional on the exact version read and move their tally entry when
 * their list key changes (writeListed, finishTally).
 */
import { TTL_ATTRIBUTE, DERIVED_SORT_KEYS, INDEXES, PK, RSVP_SOURCE_PREFIX, SK, keys } from './table.js';
import { deriveEventAggregate } from './derive.js';
import type { EventSourceItem, RsvpSourceItem, TableItem } from './items.js';
import { sameContent } from './item-content.js';
import type { Item, Key, TableIO } from './table-io.js';
import { sameTallyKey, tallyEntry, tallyKeyOf, type TallyKey } from './tally.js';
import { TallyRecounter } from './tally-recount.js';
import type { Clock } from '../core/clock.js';

/** How long a derived tombstone is kept: far longer than any derivation runs. */
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

  constructor(
    private readonly io: TableIO,
    private readonly clock: Clock,
    private readonly writeConcurrency = 16,
  ) {
    this.tallies = new TallyRecounter(io.client, io.tableName, () => io.writes++);
  }

  /** Re-derives one event's items from its sources. */
  async derive(eventId: string): Promise<void> {
    this.derivations++;
    const seqKey = keys.derivationSeq(eventId);
    for (let round = 0; round < MAX_DERIVATION_ROUNDS; round++) {
      const gen = await this.io.increment(seqKey, 'seq', 'DERIVATION_SEQ');
      const partition = (await this.io.queryAll({ pk: `EVENT#${eventId}` })) as (Item & { sk: string })[];
      if (Number(partition.find((i) => i.sk === 'SEQ')?.seq) > gen) return;

      const existing = new Map(partition.filter((i) => isDerivedKey(i.sk)).map((i) => [i.sk, i]));
      // A derivation that stopped between an item and its tally entry: finish its move first.
      for (const have of existing.values()) {
        if (!have.tally_pending) continue;
        await this.finishTally(have);
        delete have.tally_pending;
      }
      const target = new Map((await this.targetItems(partition)).map((i) => [i.sk, i as unknown as Item]));
      const plan: Record<Kind, { want: Item; have: Item | undefined }[]> = { hide: [], plain: [], reveal: [] };
      for (const sk of new Set([...existing.keys(), ...target.keys()])) {
        const have = existing.get(sk);
        // Where nothing is wanted: a tombstone over a live item, and over another derivation's mark (voiding its reveal).
        const want = target.get(sk) ?? (have && (have.type !== 'TOMBSTONE' || have.revealing !== undefined) ? { [PK]: `EVENT#${eventId}`, [SK]: sk, type: 'TOMBSTONE' } : undefined);
        if (!want || (have && sameContent(have, want))) continue;
        plan[kindOf(have, want)].push({ want, have });
      }
      if (!plan.hide.length && !plan.plain.length && !plan.reveal.length) return;
      await this.each(plan.hide, (w) => this.write(w.want, gen, w.have));
      await this.each(plan.plain, (w) => this.write(w.want, gen, w.have));
      if (plan.reveal.length) {
        const marked: { want: Item; have: Item }[] = [];
        await this.each(plan.reveal, async (w) => {
          const have = await this.mark(w.want, gen, w.have);
          if (have) marked.push({ want: w.want, have });
        });
        // Only the newest derivation reveals; a newer one has seen (or will see) the marks and decides.
        if (marked.length && Number((await this.io.get(seqKey))?.seq) === gen) await this.each(marked, (w) => this.write(w.want, gen, w.have));
      }
      if (Number((await this.io.get(seqKey))?.seq) === gen) return;
    }
    throw new Error(`derivation of ${eventId} did not settle after ${MAX_DERIVATION_ROUNDS} rounds`);
  }

  private async targetItems(partition: Item[]): Promise<TableItem[]> {
    const source = partition.find((i) => i[SK] === 'SRC') as unknown as EventSourceItem | undefined;
    if (!source?.event || source.deleted) return [];
    const rsvps = (partition.filter((i) => String(i[SK]).startsWith(RSVP_SOURCE_PREFIX)) as unknown as RsvpSourceItem[]).flatMap((r) =>
      r.rsvp && !r.deleted ? [r.rsvp] : [],
    );
    const users = await this.io.users([source.event.creator_id, ...rsvps.map((r) => r.user_id)]);
    return deriveEventAggregate({ event: source.event, creator: users.get(source.event.creator_id), rsvps, users });
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
        if (typeof current.gen === 'number' && current.gen >= gen) return undefined;
        const marked = await this.io.updateIf(key, 'SET gen = :gen, revealing = :gen', 'attribute_exists(#pk) AND (attribute_not_exists(gen) OR gen < :gen)', { ':gen': gen });
        if (marked) return marked;
      }
      current = await this.io.get(key);
    }
  }

  /** One derived item's write (a reveal's last step when `have` carries this derivation's mark). */
  private async write(want: Item, gen: number, have: Item | undefined): Promise<void> {
    if (isListedKey(String(want[SK]))) return this.writeListed(want, gen, have);
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
   */
  private async writeListed(want: Item, gen: number, have: Item | undefined): Promise<void> {
    const key: Key = { [PK]: String(want[PK]), [SK]: String(want[SK]) };
    let current = have;
    for (;;) {
      const ours = isMarkedBy(current, gen);
      if (!ours && typeof current?.gen === 'number' && current.gen >= gen) return; // a newer derivation's word stands
      if (current?.tally_pending) await this.finishTally(current);
      const from = tallyKeyOf(current);
      const moves = !sameTallyKey(from, tallyKeyOf(want));
      const item: Item = { ...this.stamp(want, gen), ...(moves ? { tally_pending: true, ...(from ? { tally_from: from } : {}) } : {}) };
      // A tombstone expires a day after its write; one holding an unfinished note must stay until the note is finished.
      if (moves) delete item[TTL_ATTRIBUTE];
      const written =
        current === undefined
          ? await this.io.putIf(item, 'attribute_not_exists(#pk)')
          : typeof current.gen === 'number'
            ? await this.io.putIf(item, current.revealing === undefined ? 'gen = :was AND attribute_not_exists(revealing)' : 'gen = :was AND revealing = :mark', {
                ':was': current.gen,
                ...(current.revealing === undefined ? {} : { ':mark': current.revealing }),
              })
            : await this.io.putIf(item, 'attribute_exists(#pk) AND attribute_not_exists(gen)');
      if (written) {
        if (moves) await this.finishTally(item);
        return;
      }
      if (ours) return; // the mark was replaced: a newer derivation decides
      current = await this.io.get(key);
    }
  }

  /**
   * Finishes the tally move of one version of a listed item: the entry where
   * it was becomes a tombstone and the entry where it is now is written (both
   * stamped with the version's `gen`, so an older move cannot undo a newer
   * one), the summaries of both are recounted, and the note is cleared.
   * Idempotent: any number of derivations may finish the same move.
   */
  private async finishTally(version: Item): Promise<void> {
    const gen = Number(version.gen);
    const from = version.tally_from as TallyKey | undefined;
    const to = tallyKeyOf(version);
    if (from && !sameTallyKey(from, to)) await this.io.putIf(this.stamp({ [PK]: from.pk, [SK]: from.sk, type: 'TOMBSTONE' }, gen), OLDER_OR_ABSENT, { ':gen': gen });
    if (to) await this.io.putIf({ ...(tallyEntry(to, String(version.event_id)) as unknown as Item), gen }, OLDER_OR_ABSENT, { ':gen': gen });
    await this.tallies.recount([from, to].filter((k): k is TallyKey => !!k));
    // Conditional on this version: a newer one that replaced it keeps its own note.
    const key = { [PK]: String(version[PK]), [SK]: String(version[SK]) };
    if (version.type === 'TOMBSTONE') {
      await this.io.updateIf(key, 'REMOVE tally_pending, tally_from SET #ttl = :expires', 'gen = :gen', { ':gen': gen, ':expires': this.expiry() }, { '#ttl': TTL_ATTRIBUTE });
    } else {
      await this.io.updateIf(key, 'REMOVE tally_pending, tally_from', 'gen = :gen', { ':gen': gen });
    }
  }

  private stamp(item: Item, gen: number): Item {
    const { revealing: _mark, ...rest } = item;
    return { ...rest, gen, ...(item.type === 'TOMBSTONE' ? { [TTL_ATTRIBUTE]: this.expiry() } : {}) };
  }

  private expiry(): number {
    return Math.floor(this.clock().getTime() / 1000) + TOMBSTONE_TTL_SECONDS;
  }
}

/** Reveal when the item gets an index key it did not have; hide when it loses one it had. */
function kindOf(have: Item | undefined, want: Item): Kind {
  if (want.type !== 'TOMBSTONE' && INDEX_ATTRIBUTES.some((a) => want[a] !== undefined && want[a] !== have?.[a])) return 'reveal';
  if (want.type === 'TOMBSTONE' || INDEX_ATTRIBUTES.some((a) => have?.[a] !== undefined && want[a] !== have[a])) return 'hide';
  return 'plain';
}

const isMarkedBy = (item: Item | undefined, gen: number): boolean => item?.gen === gen && item.revealing === gen;

/** Derived items that may be listed in user-events-index, and so carry a tally entry. */
function isListedKey(sk: string): boolean {
  return sk === DERIVED_SORT_KEYS.event || sk.startsWith(DERIVED_SORT_KEYS.profilePrefix);
}

function isDerivedKey(sk: string): boolean {
  return sk === DERIVED_SORT_KEYS.event || sk.startsWith(DERIVED_SORT_KEYS.rsvpPrefix) || sk.startsWith(DERIVED_SORT_KEYS.profilePrefix);
}
