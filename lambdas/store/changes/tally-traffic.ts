/**
 * One process's traffic on the tally summaries of one table (tally.ts), shared
 * by every applier on the same client: an ingest batch applies its records at
 * once, each with an applier of its own, and one host's burst of new events
 * meets the same day, month and year summaries in every one of them.
 *
 * Left alone, each of those derivations takes its tickets in wave A
 * (tally-moves.ts), finds another's ticket newer than its own once its entry
 * has landed, and recounts: four writes a level and a change, all in the
 * level's one partition (docs/data-model.md, "Partitions under the change
 * path"). Here instead:
 *
 * - a derivation takes no tickets of its own while another derivation in this
 *   process holds tickets on, or recounts, one of its summaries (`busy`): it
 *   writes its entries and then asks for the recount;
 * - recounts of one summary run one at a time, and a recount asked for while
 *   one is waiting its turn joins the waiting one. That recount has not yet
 *   taken its ticket, so it reads the children after every joiner's change
 *   has landed: the rule of tally-recount.ts holds for each of them. A
 *   failure reaches every joiner, whose change keeps its `tally_pending`.
 *
 * Nothing here is needed for correctness: two processes (two Lambda
 * instances) never share it, and the tickets order their recounts as before.
 */
import { keyString } from '../table/table-io.js';
import { PK, SK } from '../table/table.js';
import type { TallyKey } from '../table/tally.js';

const idOf = (k: TallyKey): string => keyString({ [PK]: k.pk, [SK]: k.sk });

export class TallyTraffic {
  private static readonly shared = new WeakMap<object, Map<string, TallyTraffic>>();

  /** The traffic of `tableName` through `client`, one per pair in a process. */
  static of(client: object, tableName: string): TallyTraffic {
    let tables = TallyTraffic.shared.get(client);
    if (!tables) TallyTraffic.shared.set(client, (tables = new Map()));
    let traffic = tables.get(tableName);
    if (!traffic) tables.set(tableName, (traffic = new TallyTraffic()));
    return traffic;
  }

  private readonly held = new Map<string, number>();
  private readonly waiting = new Map<string, Promise<void>>();
  private readonly running = new Map<string, Promise<void>>();

  /** Whether a derivation here holds tickets on, or a recount waits or runs for, any of these summaries. */
  busy(summaries: readonly TallyKey[]): boolean {
    return summaries.some((s) => {
      const id = idOf(s);
      return this.held.has(id) || this.waiting.has(id) || this.running.has(id);
    });
  }

  /** Marks the summaries held (tickets taken) until the answer is called; calling it again does nothing. */
  hold(summaries: readonly TallyKey[]): () => void {
    const ids = summaries.map(idOf);
    for (const id of ids) this.held.set(id, (this.held.get(id) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const id of ids) {
        const n = (this.held.get(id) ?? 1) - 1;
        if (n > 0) this.held.set(id, n);
        else this.held.delete(id);
      }
    };
  }

  /** Runs `recount` for the summary after the one running, or joins the one already waiting its turn. */
  recount(summary: TallyKey, recount: () => Promise<void>): Promise<void> {
    const id = idOf(summary);
    const waiting = this.waiting.get(id);
    if (waiting) return waiting;
    const before = this.running.get(id) ?? Promise.resolve();
    const turn = before
      .catch(() => undefined)
      .then(async () => {
        // Its ticket is taken after this point: whoever joins later waits for the next turn.
        this.waiting.delete(id);
        this.running.set(id, turn);
        try {
          await recount();
        } finally {
          if (this.running.get(id) === turn) this.running.delete(id);
        }
      });
    this.waiting.set(id, turn);
    return turn;
  }
}
