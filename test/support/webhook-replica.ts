/**
 * What a webhook's receiver holds (PRODUCT P18), as a consumer keeps it: the
 * deliveries it acknowledged, applied in the order they came (upsert = store
 * the object, removed = drop the id), and the cursor of the last one, which
 * it may take to the pull feed at any time. The same rule as a pull
 * consumer's replica (test/support/feed-consumer.ts), so that push and pull
 * are held to one model of the scope.
 *
 * A fresh start (`reset: true`, after the feed lost the webhook's position)
 * is a pull's fresh start: the first delivery marked `reset` after one that
 * was not (or the first of all) drops what the receiver held, and it and the
 * ones that follow list the scope's present contents; deliveries after them
 * are changes again. The copy is the new one from that first delivery on,
 * as a pull consumer's is from its first answer after a 410.
 */
import { Webhook } from 'standardwebhooks';

export interface DeliveredChange {
  id: string;
  change: string;
  event?: unknown;
  guest?: unknown;
}

export interface DeliveredBody {
  webhook_id: string;
  scope: unknown;
  changes: DeliveredChange[];
  cursor: string;
  reset?: true;
}

export class WebhookReplica {
  members = new Map<string, unknown>();
  /** The cursor of the last delivery applied (undefined before the first). */
  cursor: string | undefined;
  /** Fresh starts begun. */
  resets = 0;
  private resetting = false;

  apply(body: DeliveredBody): void {
    if (body.reset && !this.resetting) {
      this.members = new Map();
      this.resets++;
    }
    this.resetting = body.reset === true;
    for (const c of body.changes) {
      if (c.change === 'removed') this.members.delete(c.id);
      else this.members.set(c.id, c.event ?? c.guest);
    }
    this.cursor = body.cursor;
  }

  /** A copy, to try a hand-over to the pull feed on without touching this one. */
  copy(): WebhookReplica {
    const out = new WebhookReplica();
    out.members = new Map(this.members);
    out.cursor = this.cursor;
    out.resets = this.resets;
    out.resetting = this.resetting;
    return out;
  }
}

/** Whether one of `secrets` verifies the delivery, with the standardwebhooks package (the receiver's library, not ours). */
export function verifies(secrets: readonly string[], body: string, headers: Record<string, string>): boolean {
  return secrets.some((s) => {
    try {
      new Webhook(s).verify(body, headers);
      return true;
    } catch {
      return false;
    }
  });
}
