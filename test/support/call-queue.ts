/**
 * One applier's DynamoDB calls, one at a time, in an order the schedule
 * chooses. The write side sends independent calls together (a wave: a
 * change's source write with its derivation numbers and marks, a derivation's
 * item writes, their feed and tally follow-ups); in DynamoDB they land in any
 * order, and a crash can come with any of them landed. The explorations
 * (schedules.ts) make that a choice of the schedule, not of I/O timing: every
 * call of an applier waits here for its turn, only one is in flight, and a
 * turn is given only once the applier has quieted (every call it can send
 * with the answers it has is waiting), to the call the release order names:
 *
 * - `fifo`: the first sent first (the order the code issues a wave's calls);
 * - `lifo`: the last sent first.
 *
 * So a crash after the k-th write of a delivery leaves, of each wave, a
 * prefix landed (fifo) or a suffix (lifo), and a pause before the k-th call
 * lets the other appliers run between any two calls of a wave.
 *
 * Once the applier has died (`die`), every call waiting and every call still
 * to come fails with the crash without reaching the store: its process is
 * gone, nothing it had not sent lands.
 */
export type ReleaseOrder = 'fifo' | 'lifo';

/** Event-loop turns with nothing new before the applier counts as quiet (its own work is microtasks between calls). */
const QUIET_TURNS = 2;

export class CallQueue {
  order: ReleaseOrder = 'fifo';
  /** Turns given so far. */
  served = 0;
  private waiting: { go: () => void; fail: (error: Error) => void }[] = [];
  private busy = false;
  private pumping = false;
  private dead?: Error;
  private readonly idlers: (() => void)[] = [];

  /** Waits for this call's turn (it then holds the applier's only slot until `done`). */
  turn(): Promise<void> {
    if (this.dead) return Promise.reject(this.dead);
    return new Promise<void>((go, fail) => {
      this.waiting.push({ go, fail });
      this.pump();
    });
  }

  /** The call holding the turn has returned (or thrown). */
  done(): void {
    this.busy = false;
    this.pump();
  }

  /** The applier died: nothing waiting or still to come is sent. */
  die(error: Error): void {
    this.dead = error;
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) w.fail(error);
  }

  /** A new delivery on this role: a fresh order, alive again. */
  reset(order: ReleaseOrder = 'fifo'): void {
    if (this.busy || this.waiting.length) throw new Error('a delivery started while the previous one on its role still had calls in flight');
    this.order = order;
    this.dead = undefined;
  }

  /** Resolves once nothing is waiting or in flight and the applier has stayed quiet. */
  idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.idlers.push(resolve);
      this.pump();
    });
  }

  /** Whether calls are waiting or in flight now (a delivery that left work running behind it). */
  get pending(): boolean {
    return this.busy || this.waiting.length > 0;
  }

  private pump(): void {
    if (this.busy || this.pumping) return;
    this.pumping = true;
    void this.quiet().then(() => {
      this.pumping = false;
      if (this.busy) return;
      const next = this.order === 'fifo' ? this.waiting.shift() : this.waiting.pop();
      if (next) {
        this.busy = true;
        this.served++;
        next.go();
        return;
      }
      const idlers = this.idlers.splice(0);
      for (const resolve of idlers) resolve();
    });
  }

  private async quiet(): Promise<void> {
    for (let i = 0; i < QUIET_TURNS; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
