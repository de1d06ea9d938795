/**
 * Webhooks on the local server (PRODUCT P18): `npm start` delivers them
 * itself, with no AWS, through the same code the delivery functions run
 * (lambdas/delivery/: the fan-out, a webhook's deliveries). What AWS
 * provides is played here:
 * - the table's stream of feed-head writes: the embedded store's tap
 *   (local/dynalite.ts, onWrite), whoever wrote (`data:apply` included);
 * - the FIFO queue with one message group per webhook: one wake-up of a
 *   webhook runs at a time, a failed one comes back when its retry is due,
 *   by the server's movable clock (`PUT /local/clock` moves the retry
 *   schedule, so 3 days of failures are seen in seconds), looked at every
 *   TICK_MS and at once when a wake-up is sent.
 */
import { systemClock, type Clock } from '../lambdas/core/clock.js';
import type { DeliveryDeps } from '../lambdas/delivery/deliver.js';
import { runWebhook } from '../lambdas/delivery/deliver.js';
import { fanOut, scopesMoved, type Nudge } from '../lambdas/delivery/fan-out.js';
import type { WrittenKey } from './dynalite.js';

const TICK_MS = 200;
/** Webhooks delivering at once (AWS: the delivery function's concurrency). */
const CONCURRENT = 8;
const MAX_DELIVERIES = 20;

interface Group {
  /** When its next wake-up may run (ms of the data's clock). */
  dueAt: number;
  running: boolean;
  /** A wake-up arrived while it ran: run again after. */
  again: boolean;
}

export interface LocalWebhooks {
  /** The tap's listener: head writes of a feed wake that scope's webhooks. */
  onWrite(keys: WrittenKey[]): void;
  /** Wakes one webhook now (a create with backfill, a resume). */
  nudge(webhookId: string): Promise<void>;
  /** Resolves once nothing is due now and nothing runs (tests). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export function startLocalWebhooks(deps: DeliveryDeps, opts: { clock?: Clock; onError?: (error: unknown) => void } = {}): LocalWebhooks {
  const clock = opts.clock ?? deps.clock ?? systemClock;
  const groups = new Map<string, Group>();
  const runs = new Set<Promise<void>>();
  let sequence = 0;
  let closed = false;

  const wake = (nudges: Nudge[]) => {
    for (const { webhookId } of nudges) {
      const g = groups.get(webhookId);
      if (!g) groups.set(webhookId, { dueAt: clock().getTime(), running: false, again: false });
      else if (g.running) g.again = true;
      // A webhook waiting for its retry is not woken early: its retry reads everything when due (as in AWS).
    }
    pump();
  };

  const fan = async (feed: string) => {
    const token = String(++sequence);
    let task: { feed: string; token: string; after?: string } | undefined = { feed, token };
    while (task) {
      const current: { feed: string; token: string; after?: string } = task;
      task = undefined;
      await fanOut({ state: deps.state, nudge: async (n) => wake(n), continueLater: async (t) => void (task = t) }, current);
    }
  };

  const track = (p: Promise<void>) => {
    const run = p.catch((e) => opts.onError?.(e)).finally(() => runs.delete(run));
    runs.add(run);
  };

  function pump(): void {
    if (closed) return;
    const now = clock().getTime();
    let running = [...groups.values()].filter((g) => g.running).length;
    for (const [webhookId, g] of groups) {
      if (running >= CONCURRENT) break;
      if (g.running || g.dueAt > now) continue;
      g.running = true;
      g.again = false;
      running += 1;
      track(
        runWebhook(deps, webhookId, { maxDeliveries: MAX_DELIVERIES, mayStart: () => !closed })
          .then((outcome) => {
            g.running = false;
            if (outcome.kind === 'retry') g.dueAt = clock().getTime() + outcome.seconds * 1000;
            else if (outcome.kind === 'more' || g.again) g.dueAt = clock().getTime();
            else groups.delete(webhookId);
          })
          .catch((error) => {
            g.running = false;
            // As SQS would: the wake-up comes back after a while.
            g.dueAt = clock().getTime() + 5_000;
            throw error;
          })
          .finally(pump),
      );
    }
  }

  const timer = setInterval(pump, TICK_MS);
  timer.unref();

  return {
    onWrite(keys) {
      if (closed) return;
      for (const task of scopesMoved(keys.map((k) => ({ keys: { pk: { S: k.pk }, sk: { S: k.sk } }, sequence: '0' })))) track(fan(task.feed));
    },
    async nudge(webhookId) {
      wake([{ webhookId, dedupId: webhookId }]);
    },
    async settled() {
      for (;;) {
        if (runs.size) await Promise.all([...runs]);
        const now = clock().getTime();
        if (!runs.size && ![...groups.values()].some((g) => !g.running && g.dueAt <= now)) return;
        pump();
        if (!runs.size) await new Promise((r) => setImmediate(r));
      }
    },
    async close() {
      closed = true;
      clearInterval(timer);
      await Promise.all([...runs]);
    },
  };
}
