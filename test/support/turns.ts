/**
 * Interleaves concurrent appliers call by call, in an order a test chooses:
 * every DynamoDB call of applier i waits for a turn, only one call is in
 * flight at a time, and a turn is granted only once every applier still
 * running is waiting for one (and has quieted: the write side sends a wave's
 * calls together, each from its own chain of code), to the next applier
 * `order` names; among that applier's waiting calls, the first it sent. So
 * the schedule, not I/O timing, decides every interleaving, and fast-check
 * can generate and shrink it.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Event-loop turns with nothing new before the appliers count as quiet (their own work is microtasks between calls). */
const QUIET_TURNS = 2;

export class Turns {
  private readonly waiting = new Map<number, (() => void)[]>();
  private readonly running = new Set<number>();
  private inFlight = false;
  private pumping = false;
  private step = 0;

  constructor(
    private readonly order: readonly number[],
    appliers: number,
  ) {
    for (let i = 0; i < appliers; i++) this.running.add(i);
  }

  /** Runs `work` as applier i; its calls take turns with the others'. */
  async run<T>(i: number, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      this.running.delete(i);
      this.pump();
    }
  }

  /** Adds the turn-taking to applier i's client. */
  gate(i: number, client: DynamoDBDocumentClient): DynamoDBDocumentClient {
    client.middlewareStack.add(
      (next) => async (args) => {
        await new Promise<void>((resolve) => {
          const queue = this.waiting.get(i) ?? [];
          queue.push(resolve);
          this.waiting.set(i, queue);
          this.pump();
        });
        try {
          return await next(args);
        } finally {
          this.inFlight = false;
          this.pump();
        }
      },
      { step: 'initialize', name: 'turns' },
    );
    return client;
  }

  private pump(): void {
    if (this.inFlight || this.pumping) return;
    this.pumping = true;
    void (async () => {
      for (let t = 0; t < QUIET_TURNS; t++) await new Promise((resolve) => setImmediate(resolve));
      this.pumping = false;
      if (this.inFlight) return;
      const candidates = [...this.waiting].filter(([, q]) => q.length).map(([i]) => i).sort((a, b) => a - b);
      if (!candidates.length) return;
      for (const i of this.running) if (!candidates.includes(i)) return; // someone is still computing
      const preferred = this.order.length ? this.order[this.step++ % this.order.length]! : 0;
      const chosen = candidates.includes(preferred) ? preferred : candidates[this.step % candidates.length]!;
      const resolve = this.waiting.get(chosen)!.shift()!;
      this.inFlight = true;
      resolve();
    })();
  }
}
