/**
 * The settles that reach many units (settle.ts): a user's change reaches the
 * user's unit in every event they are linked to, and an event's hide, move
 * or deletion every guest's unit. Both go a chunk of units at a time, the
 * units of a chunk at once; the last finished link or guest is saved on the
 * source item (`pending_after`) after every chunk whose every unit finished,
 * so whoever settles next resumes there, and the ingest Lambda stops a chunk
 * before its deadline (FanOutIncomplete) and queues a continuation.
 *
 * A chunk is read first, in one BatchGetItem: each unit's sources and items
 * as they are. That read only predicts what each derivation will do (units.ts,
 * predict), so that its first wave marks what it will reveal and takes the
 * tickets it will need; every derivation still reads after its own number.
 */
import { predict, eventUnit, guestUnit, type Unit } from './units.js';
import type { Expectation } from './derivation-plan.js';
import type { Deriver, Outcome } from './derivation.js';
import type { EventRecord } from '../table/items.js';
import { GUEST_SEQ_PREFIX, LINK_PREFIX, PK, SK, keys } from '../table/table.js';
import { keyString, type Item, type Key, type TableIO } from '../table/table-io.js';
import { withAbsent } from './units.js';
import { all, each } from '../table/waves.js';
import { queryGuestShards, type RecordRead } from './guest-shards.js';
import { marksGuest, type ShardKnown } from './shard-record.js';

export interface FanOutOptions {
  /** Units derived at once in a fan-out (a chunk). */
  fanOutConcurrency?: number;
  /** Time left for this invocation; a fan-out stops between chunks when less than reserveMs is left. */
  remainingMs?: () => number;
  reserveMs?: number;
}

/** A fan-out stopped for time; the next arrival for the entity (a continuation, a redelivery) resumes it. */
export class FanOutIncomplete extends Error {
  constructor(readonly subject: string) {
    super(`fan-out of ${subject} stopped before the time limit; the next delivery resumes it`);
    this.name = 'FanOutIncomplete';
  }
}

export type SourceItem = Item & { pk: string; sk: string; type: string; version: number; deleted?: boolean; pending?: boolean; fanout?: boolean };

/** A promise awaited later (a read ahead, a progress): its failure is thrown where it is awaited, not reported unhandled meanwhile. */
function quiet<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

const finished = (outcomes: readonly Outcome[]): boolean => outcomes.every((o) => o === 'finished');

export class FanOut {
  readonly chunk: number;

  constructor(
    private readonly io: TableIO,
    private readonly deriver: Deriver,
    private readonly opts: FanOutOptions = {},
  ) {
    this.chunk = Math.max(1, opts.fanOutConcurrency ?? 8);
  }

  /** Runs `run` over every event linked to the user, a chunk at a time, each chunk's `read` ahead of it (`chunks`). */
  async links<R>(user: SourceItem, read: (eventIds: string[]) => Promise<R>, run: (eventIds: string[], r: R) => Promise<boolean>): Promise<boolean> {
    const after = typeof user.pending_after === 'string' ? user.pending_after : undefined;
    const links = (await this.io.queryAll({ pk: user[PK], prefix: LINK_PREFIX, after: after ? `${LINK_PREFIX}${after}` : undefined })).map((l) => String(l.event_id));
    return this.chunks(user, String(user.user_id), links, read, run);
  }

  /** A chunk of a live user's fan-out, read in one BatchGetItem: each event's sources and the user's items there. */
  async readUserChunk(user: SourceItem, eventIds: readonly string[]): Promise<Map<string, Item>> {
    const userId = String(user.user_id);
    const read = await this.read(eventIds.flatMap((e) => [keys.eventSource(e), keys.rsvpSource(e, userId), keys.rsvp(e, userId), keys.guestCount(e, userId), keys.profileEntry(e, userId), keys.event(e)]));
    return read.set(keyString(keys.user(userId)), user);
  }

  /**
   * One chunk of a live user's fan-out: per event, the user's guest unit, and
   * the event unit when the user created the event or its item still shows
   * them as its host (a move away from them in flight): its creator snapshot,
   * its list keys. An event moved to the user after this chunk's read
   * derives its own unit after that, reading the user as stored now; an
   * older derivation cannot write the user back onto an item a newer one
   * wrote (the write is conditional on the version it read).
   */
  async userChunk(user: SourceItem, eventIds: readonly string[], read: ReadonlyMap<string, Item>, recovering: boolean): Promise<boolean> {
    const userId = String(user.user_id);
    const runs = eventIds.flatMap((eventId) => {
      const creator = (read.get(keyString(keys.eventSource(eventId)))?.event as EventRecord | undefined)?.creator_id;
      const shown = (read.get(keyString(keys.event(eventId)))?.creator as { id?: string } | undefined)?.id;
      const units = [guestUnit(eventId, userId), ...(creator === userId || shown === userId ? [eventUnit(eventId)] : [])];
      // The guest unit's shard is marked if any of the user's items there was read (an RSVP's source, even deleted,
      // or a host's profile entry: the common case); else its derivation reads the record first (a host of a
      // hidden event, say), which costs that rare case a round trip and spares every other a read unit.
      const mine = [keys.rsvpSource(eventId, userId), keys.rsvp(eventId, userId), keys.guestCount(eventId, userId), keys.profileEntry(eventId, userId)];
      const shard: ShardKnown | undefined = mine.some((k) => read.has(keyString(k))) ? 'marked' : undefined;
      return units.map((unit) => ({ unit, creator, expect: predict(unit, read, read), shard }));
    });
    return this.derive(runs, recovering);
  }

  /** Derivations at once, their tally moves in one batch (tally-moves.ts): a chunk's units share their lists' summaries. */
  private async derive(runs: readonly { unit: Unit; creator: string | undefined; expect: Expectation; shard: ShardKnown | undefined }[], recovering: boolean): Promise<boolean> {
    const tally = this.deriver.tallyBatch(runs.map((r) => r.expect), runs.map((r) => r.unit));
    return finished(await each(runs, ({ unit, creator, expect, shard }) => this.deriver.derive(unit, { recovering, creator, expect, tally, shard })));
  }

  /**
   * Every guest unit of an event whose projection on them changed (or that is
   * gone), a chunk at a time: every user with a derivation counter in the
   * event (whoever ever derived an item there has one), and the creator,
   * first. A guest derivation that takes its number after the Query of the
   * counters also reads the event's source after it: it derives from the new
   * state itself. `recordRead`: the event's guest shard record as the caller
   * read it once `stored` was written (a deletion's walk over its RSVPs).
   */
  async guests(stored: SourceItem, creator: string | undefined, recovering: boolean, recordRead?: RecordRead): Promise<boolean> {
    const eventId = String(stored.event_id);
    const after = typeof stored.pending_after === 'string' ? stored.pending_after : undefined;
    const { items: counters, record } = await queryGuestShards(this.io, eventId, GUEST_SEQ_PREFIX, after, recordRead);
    const guests = counters.map((c) => String(c[SK]).slice(GUEST_SEQ_PREFIX.length)).filter((g) => g !== creator || after !== undefined);
    // The creator's unit like any guest's, with the first chunk (its counter, if any, is not counted twice), with its
    // bucket's recount, which its entry may need too. The progress saved is a counter's: the creator is never last.
    const first = creator && after === undefined ? [creator] : [];
    const units = (part: string[], index: number) => (index === 0 ? [...first, ...part] : part);
    const read = (part: string[], index: number) => this.read([keys.eventSource(eventId), ...(creator ? [keys.user(creator)] : []), ...units(part, index).flatMap((g) => [keys.rsvpSource(eventId, g), keys.user(g), keys.rsvp(eventId, g), keys.guestCount(eventId, g), keys.profileEntry(eventId, g)])]);
    // A guest found by its counter is in a marked shard; the creator's shard is as the walk's record read it.
    const shard = (g: string): ShardKnown => (g !== creator || marksGuest(record, g) ? 'marked' : 'unmarked');
    const derive = (part: string[], r: ReadonlyMap<string, Item>, index: number) => this.derive(units(part, index).map((g) => ({ unit: guestUnit(eventId, g), creator, expect: predict(guestUnit(eventId, g), r, r), shard: shard(g) })), recovering);
    if (!guests.length) return first.length ? derive([], await read([], 0), 0) : true;
    return this.chunks(stored, eventId, guests, read, derive);
  }

  /**
   * A chunk at a time: the time checked between chunks, the last id of each
   * chunk saved once every unit of it finished. A chunk's `read` (it only
   * predicts: fan-out comment) goes with the previous chunk's units, and a
   * chunk's progress with the next chunk's first wave: a resumed fan-out
   * starts at the last saved chunk either way, and its units are idempotent.
   */
  async chunks<R>(source: SourceItem, subject: string, ids: readonly string[], read: (part: string[], index: number) => Promise<R>, run: (part: string[], r: R, index: number) => Promise<boolean>): Promise<boolean> {
    const parts = Array.from({ length: Math.ceil(ids.length / this.chunk) }, (_, k) => ids.slice(k * this.chunk, (k + 1) * this.chunk));
    let done = true;
    let saving: Promise<unknown> = Promise.resolve();
    const readAhead = (k: number): Promise<R> => quiet(read(parts[k]!, k));
    let ahead: Promise<R> | undefined = parts.length ? readAhead(0) : undefined;
    try {
      for (let k = 0; k < parts.length; k++) {
        if (k > 0) this.checkTime(subject);
        const r = await ahead!;
        ahead = k + 1 < parts.length ? readAhead(k + 1) : undefined;
        const [finishedChunk] = await all([run(parts[k]!, r, k), saving]);
        done = finishedChunk && done;
        const last = parts[k]![parts[k]!.length - 1]!;
        // Saved only on the very state walked: the same version and the same liveness (a tombstone keeps its live
        // version, and its own walk must not resume from where a live one stopped).
        const alive = source.deleted ? '#deleted = :true' : 'attribute_not_exists(#deleted)';
        saving = done && k + 1 < parts.length ? quiet(this.io.updateIf({ [PK]: source[PK], [SK]: source[SK] }, 'SET pending_after = :after', `#version = :v AND #pending = :true AND ${alive}`, { ':after': last, ':v': source.version, ':true': true }, { '#pending': 'pending', '#deleted': 'deleted' })) : Promise.resolve();
      }
    } finally {
      // Nothing left running behind the fan-out (waves.ts): a read ahead or a progress still in flight is waited for.
      await Promise.allSettled([ahead, saving]);
    }
    await saving;
    return done;
  }

  checkTime(subject: string): void {
    if (this.opts.remainingMs && this.opts.remainingMs() < (this.opts.reserveMs ?? 10_000)) throw new FanOutIncomplete(subject);
  }

  private async read(asked: readonly Key[]): Promise<Map<string, Item>> {
    return withAbsent(await this.io.getMany(asked), asked);
  }
}
