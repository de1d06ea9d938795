/**
 * Interleaves concurrent appliers call by call, in an order a test chooses:
 * every DynamoDB call of applier i waits for a turn, only one call is in
 * flight at a time, and a turn is granted only once every applier still
 * running is waiting for one, to the next applier `order` names. So the
 * schedule, not I/O timing, decides every interleaving, and fast-check can
 * generate and shrink it. Each applier must make one call at a time
 * (writeConcurrency and fanOutConcurrency 1).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export class Turns {
  private readonly waiting = new Map<number, () => void>();
  private readonly running = new Set<number>();
  private inFlight = false;
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
          this.waiting.set(i, resolve);
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
    if (this.inFlight || this.waiting.size === 0) return;
    for (const i of this.running) if (!this.waiting.has(i)) return; // someone is still computing
    const candidates = [...this.waiting.keys()].sort((a, b) => a - b);
    const preferred = this.order.length ? this.order[this.step++ % this.order.length]! : 0;
    const chosen = candidates.includes(preferred) ? preferred : candidates[this.step % candidates.length]!;
    const resolve = this.waiting.get(chosen)!;
    this.waiting.delete(chosen);
    this.inFlight = true;
    resolve();
  }
}
