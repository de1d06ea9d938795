/**
 * The derivation engine: makes a unit's derived items (units.ts) equal to
 * what derive.ts, the full load's own derivation, gives for their stored
 * sources, under any number of concurrent appliers and crashes
 * (docs/data-model.md, "Write side").
 *
 * One derivation of a unit, in waves (calls sent together: waves.ts):
 *
 * A. Take the next number `gen` of the unit's counter; with it, mark the
 *    items the caller expects it to reveal (`revealing` = this derivation's
 *    token, content untouched) and take the recount tickets it expects to
 *    need (its count bucket's, its tally move's summaries'). The caller may
 *    send this wave with the change's source write (applier.ts). A guest
 *    unit's shard is marked in its event's record before this wave, unless
 *    the caller knows it is (shard-record.ts).
 * B. Read (consistent) its sources, its counter and its items, with the
 *    bucket's entries and the tally summaries' children when ticketed. A
 *    newer number taken: it leaves the unit to that derivation and answers
 *    that it handed off (the caller keeps `pending`: settle.ts). This read is
 *    also the reveal's check: marks landed before it, so a derivation
 *    numbered after it reads them (below).
 * C. Write only what differs, each item stamped `gen`: hides, plain writes,
 *    and the reveals whose item carries this derivation's mark (conditional
 *    on that version); the count bucket's count as the entries read give it
 *    with this unit's entry in. A reveal it did not expect is marked now,
 *    checked against the counter in D and written in E.
 * D. What each written version owes (feeds, tally: version-writes.ts), the
 *    counter read again, the bucket's ticket read again. A newer derivation
 *    that started while this one wrote may have read before these writes
 *    landed: derive again.
 *
 * Why a reveal is safe: an item becomes reachable only by a reveal's write,
 * conditional on this derivation's mark. If a newer derivation took its
 * number before the check (B), this one reveals nothing; if after, it read
 * the item after the mark landed, and a marked item differs from every
 * target, so it writes that item conditional on the version it read: either
 * its write lands first and voids the reveal, or the reveal lands first and
 * its write fails, it reads again and hides the item before it finishes. So a
 * derivation that has finished is never followed by an older one's reveal: a
 * completed hide stays hidden, whoever dies when.
 *
 * Every conditional write recognises its own landed write when its response
 * was lost and the SDK's retry then failed the condition: `gen` is unique to
 * one derivation.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { markedWith, planWrites, type Expectation, type PlannedWrite } from './derivation-plan.js';
import { GuestCountRecounter } from './guest-counts.js';
import { keys, PK, SK } from '../table/table.js';
import { keyString, type Item, type TableIO } from '../table/table-io.js';
import { summariesOfMoves, TallyMoves, type TallyBatch } from './tally-moves.js';
import { TallyRecounter } from './tally-recount.js';
import { bucketOf, sourceKeys, targetsOf, withAbsent, type Unit } from './units.js';
import { moveOf, VersionWriter, type Written } from './version-writes.js';
import { ShardRecord, type ShardKnown } from './shard-record.js';
import { all, each } from '../table/waves.js';

const MAX_DERIVATION_ROUNDS = 25;
/** A derivation's id in a tally batch: its counter's key. */
const participant = (unit: Unit): string => keyString(unit.seq);

/** finished: its items are what the sources it read give, and no newer derivation had started; handed-off: a newer number was taken; missing: the settle's reference check failed before any write. */
export type Outcome = 'finished' | 'handed-off' | { missing: string };

export interface DeriveOptions {
  /** The settle of a source item found pending: its derivations may have died before their feed entries or count. */
  recovering?: boolean;
  /** What the caller expects the derivation to do (units.ts, predict): its marks and tickets go with its number. */
  expect?: Expectation;
  /** The event's creator, when the caller knows it: read with the unit's sources. */
  creator?: string;
  /** Sent with the number (a recovering settle's user link). */
  alongside?: () => Promise<unknown>;
  /** The settle's reference check on the sources read: a reference it names missing stops the derivation before any write. */
  check?: (got: ReadonlyMap<string, Item>) => string | null;
  /** The tally batch of the derivations it runs at once with (a fan-out chunk: tally-moves.ts); its own otherwise. */
  tally?: TallyBatch;
  /**
   * A guest unit: what the caller knows of its guest shard's mark (shard-record.ts), which must land before the
   * unit's first write there (its number). Unknown: the record is read first.
   */
  shard?: ShardKnown;
}

/** Wave A's results. */
export interface Prepared {
  gen: number;
  token: string;
  bucketTicket?: number;
  /** The tally batch its first writes' moves go to (none after the first round: they move alone). */
  batch?: TallyBatch;
}

export class Deriver {
  /** Units derived since the last reset. */
  derivations = 0;
  private readonly counts: GuestCountRecounter;
  private readonly moves: TallyMoves;
  readonly versions: VersionWriter;
  readonly shards: ShardRecord;

  constructor(
    private readonly io: TableIO,
    clock: Clock,
    /** A fresh mark token per derivation (tests inject a deterministic one). */
    private readonly token: () => string = randomUUID,
  ) {
    this.counts = new GuestCountRecounter(io);
    this.moves = new TallyMoves(io, new TallyRecounter(io.client, io.tableName, () => io.writes++), () => this.versions.expiry());
    this.versions = new VersionWriter(io, clock, this.moves);
    this.shards = new ShardRecord(io);
  }

  /** A batch for the tally moves of derivations run at once (a fan-out chunk), predicted to touch these summaries. */
  tallyBatch(expectations: readonly (Expectation | undefined)[], participants: readonly Unit[]): TallyBatch {
    return this.moves.batch(summariesOfMoves(expectations.flatMap((e) => e?.moves ?? [])), participants.map(participant));
  }

  /** Wave A: the unit's number, its expected marks and tickets (and whatever the caller sends alongside). */
  async prepare(unit: Unit, opts: DeriveOptions = {}, batch: TallyBatch | null = opts.tally ?? this.tallyBatch([opts.expect], [unit])): Promise<Prepared> {
    const token = this.token();
    const bucket = unit.kind === 'guest' && (opts.expect?.countChanges || opts.recovering);
    try {
      // Its number is the unit's first write in its guest shard: the shard's mark lands before it (shard-record.ts).
      // Known marked: no await at all, so the wave's calls go out as they always did (the caller's wave beside it).
      if (unit.kind === 'guest' && opts.shard !== 'marked') await this.shards.ensure(unit.eventId, unit.userId!, opts.shard);
      const [gen, , bucketTicket] = await all([
        this.io.increment(unit.seq, 'seq', 'DERIVATION_SEQ'),
        each(opts.expect?.reveals ?? [], (k) => this.versions.mark(k, token)),
        bucket ? this.counts.ticket(unit.eventId, bucketOf(unit)) : Promise.resolve(undefined),
        batch ? batch.tickets() : Promise.resolve(),
        opts.alongside ? opts.alongside() : Promise.resolve(),
      ] as const);
      return { gen, token, bucketTicket, batch: batch ?? undefined };
    } catch (error) {
      batch?.declare(participant(unit), []);
      throw error;
    }
  }

  /** One derivation of `unit` (file comment); `prepared`: its wave A, sent by the caller. */
  async derive(unit: Unit, opts: DeriveOptions & { prepared?: Promise<Prepared> } = {}): Promise<Outcome> {
    this.derivations++;
    let prepared = await (opts.prepared ?? this.prepare(unit, opts));
    const first = prepared.batch;
    try {
      for (let round = 0; round < MAX_DERIVATION_ROUNDS; round++) {
        // A later round's unit has its number, in its shard: the shard is marked.
        if (round > 0) prepared = await this.prepare(unit, { recovering: opts.recovering, shard: 'marked' }, null);
        // The settle's reference check comes before the first write only: a later round derives whatever the sources give.
        const outcome = await this.round(unit, prepared, round === 0 ? opts : { ...opts, check: undefined });
        if (outcome !== 'again') return outcome;
      }
    } finally {
      // Whatever happened, its batch must not wait for it (a derivation that wrote declared its moves already).
      first?.declare(participant(unit), []);
    }
    throw new Error(`derivation of ${unit.seq[PK]} ${unit.seq[SK]} did not settle after ${MAX_DERIVATION_ROUNDS} rounds`);
  }

  /** Waves B to D of one numbered derivation; `again`: a newer number was taken while it wrote. */
  private async round(unit: Unit, p: Prepared, opts: DeriveOptions): Promise<Outcome | 'again'> {
    const { gen, token } = p;
    const recovering = opts.recovering ?? false;
    const asked = [unit.seq, ...unit.own, ...sourceKeys(unit, opts.creator)];
    const [read, entries] = await all([
      this.io.getMany(asked),
      p.bucketTicket !== undefined ? this.counts.entries(unit.eventId, bucketOf(unit)) : Promise.resolve(undefined),
      p.batch ? p.batch.children() : Promise.resolve(),
    ] as const);
    const got = withAbsent(read, asked);
    if (Number(got.get(keyString(unit.seq))?.seq) > gen) return 'handed-off';
    let derived = targetsOf(unit, got);
    if ('needs' in derived) {
      // The creator was not known (or changed) when the read was sent: one more read.
      for (const [k, v] of withAbsent(await this.io.getMany([derived.needs]), [derived.needs])) got.set(k, v);
      derived = targetsOf(unit, got);
      if ('needs' in derived) throw new Error(`the creator of ${unit.eventId} could not be read`);
    }
    const missing = opts.check?.(got);
    if (missing) return { missing };

    const existing = new Map<string, Item>();
    await each(unit.own, async (k) => {
      const have = got.get(keyString(k));
      // A derivation that stopped between an item and its tally or feed follow-ups: finish those first.
      if (have) existing.set(k[SK]!, await this.versions.finishNotes(have, recovering));
    });
    const writes = planWrites(unit.own, existing, derived.targets);
    const countWrite = writes.find((w) => String(w.key[SK]).startsWith('COUNT#'));
    // An entry found as wanted may be another derivation's whose count never landed (a duplicate delivery of the same
    // change that died between its entry and its count, while this one settles the source it left pending: found by
    // the deep exploration), so a guest derivation that finds an entry recounts its bucket whether it wrote it or not.
    const countKey = keys.guestCount(unit.eventId, unit.userId ?? '');
    const recount = unit.kind === 'guest' && (countWrite !== undefined || recovering || existing.has(countKey[SK]!));
    if (!writes.length && !recount) return 'finished';

    // Wave C.
    const expected = writes.filter((w) => w.kind !== 'reveal' || markedWith(w.have, token));
    const unexpected = writes.filter((w) => w.kind === 'reveal' && !markedWith(w.have, token));
    const [written, marked, counted] = await all([
      each(expected, (w) => this.write(w, gen, recovering)),
      each(unexpected, (w) => this.versions.mark(w.key, token)),
      recount && p.bucketTicket !== undefined && entries
        ? this.counts.setComputed(unit.eventId, bucketOf(unit), p.bucketTicket, entries, { sk: countKey[SK]!, item: countWrite ? countWrite.want : existing.get(countKey[SK]!) })
        : Promise.resolve(false),
    ] as const);

    // Wave D on: follow-ups, the counter again, the bucket's ticket again; a reveal not expected is written once checked.
    const versions = written.filter((w): w is Written => typeof w === 'object');
    p.batch?.declare(participant(unit), versions.filter((w) => w.version.tally_pending).map((w) => moveOf(w.version)));
    const entryLanded = !countWrite || written[expected.indexOf(countWrite)] !== false;
    const [newest] = await all([
      this.newestAfter(unit, gen, unexpected, marked, recovering),
      each(versions, (w) => this.versions.finish(w, p.batch)),
      recount ? this.bucket(unit, p.bucketTicket, counted && entryLanded) : Promise.resolve(),
    ] as const);
    // Nothing written: its number was the newest when it read (B).
    if (!writes.length) return 'finished';
    // A round that only marked changed no content: a newer derivation reveals what is due, so this one may stop.
    // (Deriving again here is how derivations racing to reveal once chased each other's numbers without end.)
    if (!newest && !expected.length) return 'handed-off';
    return newest ? 'finished' : 'again';
  }

  /** One planned write of wave C: a version (listed or fed items) or a plain item (false: refused). */
  private async write(w: PlannedWrite, gen: number, recovering: boolean): Promise<Written | boolean | undefined> {
    if (VersionWriter.isVersioned(w.key)) return this.versions.writeVersion(w.want, gen, w.have, recovering);
    return this.versions.writePlain(w.want, gen);
  }

  /**
   * Whether this derivation's number is still the newest once its writes have
   * landed. Reveals it did not expect were marked in wave C: the first
   * counter read is their check; they are written only if it still holds,
   * and the counter is read once more after them.
   */
  private async newestAfter(unit: Unit, gen: number, unexpected: PlannedWrite[], marked: Item[], recovering: boolean): Promise<boolean> {
    const newest = async () => Number((await this.io.get(unit.seq))?.seq) === gen;
    if (!(await newest())) return false;
    if (!unexpected.length) return true;
    const revealed = await all(unexpected.map((w, i) => this.versions.writeVersion(w.want, gen, marked[i], recovering)));
    await each(revealed.filter((r): r is Written => r !== undefined), (r) => this.versions.finish(r));
    return newest();
  }

  /** The count bucket once this unit's entry has landed: its computed count stands if no later ticket was taken, else it is recounted. */
  private async bucket(unit: Unit, ticket: number | undefined, stored: boolean): Promise<void> {
    if (ticket !== undefined && stored && (await this.counts.unchanged(unit.eventId, bucketOf(unit), ticket))) return;
    await this.counts.recount(unit.eventId, bucketOf(unit));
  }
}
