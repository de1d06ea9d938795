/**
 * A tally move in a derivation's waves (docs/data-model.md, "Tallies"): the
 * entry where a listed item was becomes a tombstone, the entry where it is
 * now is written, and the day, month and year summaries of both are
 * recounted, by the rule of guest-counts.ts: whoever changes a child, once
 * the change has landed, either sees no ticket newer than its own on the
 * summary (its count, computed from children read after its ticket, stands
 * or a later ticket's replaces it), or recounts after its change
 * (tally-recount.ts: ticket, children, count, finest level first).
 *
 * The way that meets no other recount costs no round trip of its own beyond
 * the move's two: the tickets are taken with the derivation's number (wave
 * A, when the derivation expected the move), the children read with its
 * read (wave B), and then, after the item's write, the entries with every
 * level's count at once (each level computed from the one below as it will
 * be), then one read of the tickets. A month's count is computed from its
 * days with the moved days' new counts in; a writer that changed another day
 * of that month checks its own month ticket after its day's count landed,
 * so the last ticket's count has it either way.
 */
import type { Item, TableIO } from '../table/table-io.js';
import { keyString } from '../table/table-io.js';
import { PK, SK, TTL_ATTRIBUTE } from '../table/table.js';
import { childRange, LEVELS, summariesOf, tallyEntry, ticketKey, TALLY_SUMMARY_TYPE, TALLY_TICKET_TYPE, type TallyKey } from '../table/tally.js';
import type { TallyRecounter } from './tally-recount.js';
import { all, each } from '../table/waves.js';

/** A move: the entry of an item stamped `gen` goes from `from` to `to`. */
export interface Move {
  from: TallyKey | null;
  to: TallyKey | null;
  eventId: string;
  gen: number;
}

/** Wave A's tickets by summary, and the hold on them in this process (tally-traffic.ts). */
interface Taken {
  tickets: Map<string, number>;
  release: () => void;
}

const keyOf = (k: TallyKey) => ({ [PK]: k.pk, [SK]: k.sk });
const idOf = (k: TallyKey): string => keyString(keyOf(k));

/** The summaries moves recount, each once, finest level first. */
export function summariesOfMoves(moves: readonly { from: TallyKey | null; to: TallyKey | null }[]): TallyKey[] {
  const all = new Map<string, TallyKey>();
  for (let level = 0; level < LEVELS.length; level++) {
    for (const { from, to } of moves) for (const k of [from, to]) if (k) all.set(idOf(summariesOf(k)[level]!), summariesOf(k)[level]!);
  }
  return [...all.values()];
}

export class TallyMoves {
  constructor(
    private readonly io: TableIO,
    private readonly recounter: TallyRecounter,
    /** A tombstone's expiry (version-writes.ts): an entry's tombstone expires like any other. */
    private readonly tombstoneExpiry: () => number,
  ) {}

  /** A batch of the moves of `participants` (derivations of one settle or one fan-out chunk), predicted to touch `summaries`. */
  batch(summaries: readonly TallyKey[], participants: readonly string[]): TallyBatch {
    return new TallyBatch(this, summaries, participants);
  }

  /** A move on its own, after its entries (tally-recount.ts): a version no batch took in. */
  async alone(move: Move): Promise<void> {
    await all(this.entries(move));
    await this.recounter.recount([move.from, move.to].filter((k): k is TallyKey => !!k));
  }

  /**
   * Wave A's tickets, held in this process until `release`; none while another derivation here holds or recounts one
   * of the summaries (tally-traffic.ts): the moves then recount after their entries, joining the others' recounts.
   */
  async tickets(summaries: readonly TallyKey[]): Promise<Taken> {
    if (this.recounter.traffic.busy(summaries)) return { tickets: new Map(), release: () => undefined };
    const release = this.recounter.traffic.hold(summaries);
    try {
      const taken = await each(summaries, (s) => this.io.increment(keyOf(ticketKey(s)), 'ticket', TALLY_TICKET_TYPE));
      return { tickets: new Map(summaries.map((s, i) => [idOf(s), taken[i]!])), release };
    } catch (error) {
      release();
      throw error;
    }
  }

  async children(summaries: readonly TallyKey[]): Promise<Map<string, Item[]>> {
    const read = await each(summaries, (s) => {
      const range = childRange(s);
      return this.io.queryAll({ pk: range.pk, between: { from: range.from, to: range.to } });
    });
    return new Map(summaries.map((s, i) => [idOf(s), read[i]!]));
  }

  /**
   * Moves with their summaries' tickets and children taken before: every
   * entry and every level's computed count at once, then the tickets read;
   * if one moved on or a write was refused, the recount after the entries.
   */
  async together(moves: readonly Move[], tickets: ReadonlyMap<string, number>, children: ReadonlyMap<string, Item[]>): Promise<void> {
    const summaries = summariesOfMoves(moves);
    const counts = summaries.every((s) => tickets.has(idOf(s))) ? computed(summaries, children, moves) : undefined;
    if (!counts) {
      await all(moves.flatMap((m) => this.entries(m)));
      return this.recounter.recount(moves.flatMap((m) => [m.from, m.to]).filter((k): k is TallyKey => !!k));
    }
    const landed = await all([...moves.flatMap((m) => this.entries(m)), ...summaries.map((s) => this.store(s, counts.get(idOf(s))!, tickets.get(idOf(s))!))]);
    const current = await this.io.getMany(summaries.map((s) => keyOf(ticketKey(s))));
    if (landed.every(Boolean) && summaries.every((s) => Number(current.get(idOf(ticketKey(s)))?.ticket) === tickets.get(idOf(s)))) return;
    await this.recounter.recount(moves.flatMap((m) => [m.from, m.to]).filter((k): k is TallyKey => !!k));
  }

  /** A move's entries stamped with the version's `gen`: the old one a tombstone, the new one written; each only over nothing, an unstamped load, or an older one. */
  private entries({ from, to, eventId, gen }: Move): Promise<boolean>[] {
    const put = (item: Item) => this.io.putIf({ ...item, gen }, 'attribute_not_exists(#pk) OR attribute_not_exists(gen) OR gen < :gen', { ':gen': gen });
    return [...(from && (!to || idOf(from) !== idOf(to)) ? [put({ [PK]: from.pk, [SK]: from.sk, type: 'TOMBSTONE', [TTL_ATTRIBUTE]: this.tombstoneExpiry() })] : []), ...(to ? [put(tallyEntry(to, eventId) as unknown as Item)] : [])];
  }

  private async store(summary: TallyKey, count: number, ticket: number): Promise<boolean> {
    const stored = await this.io.updateIf({ [PK]: summary.pk, [SK]: summary.sk }, 'SET #count = :count, counted = :ticket, #type = :type', 'attribute_not_exists(counted) OR counted < :ticket', { ':count': count, ':ticket': ticket, ':type': TALLY_SUMMARY_TYPE }, { '#count': 'count', '#type': 'type' });
    return stored !== undefined;
  }
}

/**
 * The tally moves of a few derivations that run at once (one settle's, or
 * one fan-out chunk's: a rename moves every one of a user's entries within
 * the same day, month and year summaries, which parallel recounts would
 * fight over). The summaries' tickets are taken once with the derivations'
 * numbers (wave A) and their children read once with their reads (wave B);
 * each derivation then declares the moves its first writes made (wave C's
 * versions, or none), and once every one has, the moves' entries and counts
 * go at once (wave D) and the tickets are read (wave E). A derivation that
 * writes again later (a newer number was taken meanwhile) moves alone.
 */
export class TallyBatch {
  private taken?: Promise<Taken>;
  private read?: Promise<Map<string, Item[]>>;
  private readonly moves: Move[] = [];
  private readonly undeclared: Set<string>;
  private readonly done: Promise<void>;
  private finish!: (result: Promise<void>) => void;

  constructor(
    private readonly tally: TallyMoves,
    private readonly summaries: readonly TallyKey[],
    participants: readonly string[],
  ) {
    this.undeclared = new Set(participants);
    this.done = new Promise<Promise<void>>((resolve) => (this.finish = resolve)).then((result) => result);
    // Nobody may be waiting yet when it fails; each waiter sees the failure when it awaits.
    this.done.catch(() => undefined);
  }

  /** Wave A: the predicted summaries' tickets (once, whoever asks first). */
  tickets(): Promise<Taken> {
    this.taken ??= this.summaries.length ? this.tally.tickets(this.summaries) : Promise.resolve({ tickets: new Map(), release: () => undefined });
    return this.taken;
  }

  /** Wave B: their children (once, after the tickets; none to read when it took none). */
  children(): Promise<unknown> {
    this.read ??= this.summaries.length
      ? this.tickets().then((taken) => (taken.tickets.size ? this.tally.children(this.summaries) : new Map()))
      : Promise.resolve(new Map());
    return this.read;
  }

  /** A participant's moves of its first writes; the batch goes once every participant has declared (none: it moves nothing). */
  declare(participant: string, moves: readonly Move[]): void {
    if (!this.undeclared.delete(participant)) return;
    this.moves.push(...moves);
    if (this.undeclared.size === 0) this.finish(this.go());
  }

  /** Resolves once every declared move has its summaries right. */
  settled(): Promise<void> {
    return this.done;
  }

  private async go(): Promise<void> {
    try {
      if (!this.moves.length) return;
      const [taken, children] = await all([this.taken ?? Promise.resolve(undefined), this.read ?? Promise.resolve(new Map<string, Item[]>())] as const);
      await this.tally.together(this.moves, taken?.tickets ?? new Map(), children as Map<string, Item[]>);
    } finally {
      // The tickets are no longer this batch's to use: another derivation here may take its own again.
      this.taken?.then((t) => t.release(), () => undefined);
    }
  }
}

/**
 * Each summary's count once the move is in: a day from its entries read (the
 * old one gone, the new one there), a month from its days read with the
 * moved days' new counts, a year likewise from its months. Undefined when a
 * child read is missing.
 */
function computed(summaries: readonly TallyKey[], children: ReadonlyMap<string, Item[]>, moves: readonly Move[]): Map<string, number> | undefined {
  const out = new Map<string, number>();
  for (const s of summaries) {
    const kids = children.get(idOf(s));
    if (!kids) return undefined;
    const range = childRange(s);
    const inside = (k: TallyKey | null): k is TallyKey => !!k && k.pk === range.pk && k.sk >= range.from && k.sk <= range.to;
    if (range.entries) {
      const live = new Set(kids.filter((k) => k.type === 'TALLY_ENTRY').map((k) => String(k[SK])));
      for (const { from, to } of moves) if (inside(from) && !(to && idOf(to) === idOf(from))) live.delete(from.sk);
      for (const { to } of moves) if (inside(to)) live.add(to.sk);
      out.set(idOf(s), live.size);
      continue;
    }
    const counts = new Map(kids.map((k) => [String(k[SK]), Number(k.count ?? 0)]));
    // Children are computed before their parents (summaries come finest first).
    for (const [id, n] of out) {
      const [pk, sk] = id.split('\u0000') as [string, string];
      if (pk === range.pk && sk >= range.from && sk <= range.to) counts.set(sk, n);
    }
    out.set(idOf(s), [...counts.values()].reduce((a, b) => a + b, 0));
  }
  return out;
}
