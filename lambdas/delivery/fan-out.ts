/**
 * The fan-out (PRODUCT P18): a scope's feed moved, so each of its active
 * webhooks is woken (one message to the webhook's own FIFO message group;
 * locally the same, local/webhooks.ts). The ingest does none of this: a
 * change appends to the scopes it enters as before, and what tells the
 * fan-out is the table's own stream of those appends (the feed heads'
 * writes, lib/webhooks.ts), so a change's work stays O(scopes it enters)
 * whatever the number of webhooks, and loads, resyncs and recovered
 * settles wake webhooks like changes do.
 *
 * A webhook that is retrying is not woken (its own retry reads everything
 * when it is due), nor a disabled one. A scope's webhooks are read a page at
 * a time; what does not fit in one invocation goes on in the next, from
 * where it stopped (ARCHITECTURE rule 14).
 */
import type { DeliveryState } from '../store/webhooks/delivery-state.js';

/** Webhooks woken per scope per invocation; the rest is a continuation. */
export const FAN_OUT_PAGE = 1000;

export interface Nudge {
  webhookId: string;
  /** The same wake-up sent twice (a stream batch retried) is one: FIFO deduplication by this id. */
  dedupId: string;
}

/** One scope's fan-out, or the rest of one: `token` names the changes that caused it, `after` the last webhook woken. */
export interface FanOutTask {
  feed: string;
  token: string;
  after?: string;
}

export interface FanOutDeps {
  state: DeliveryState;
  nudge: (nudges: Nudge[]) => Promise<void>;
  continueLater: (task: FanOutTask) => Promise<void>;
  pageSize?: number;
}

/** Wakes one page of the scope's active webhooks; queues the rest. Answers how many it woke. */
export async function fanOut(deps: FanOutDeps, task: FanOutTask): Promise<number> {
  const page = await deps.state.scopePage(task.feed, task.after, deps.pageSize ?? FAN_OUT_PAGE);
  const wake = page.entries.filter((e) => e.state === 'active');
  if (wake.length) await deps.nudge(wake.map((e) => ({ webhookId: e.webhookId, dedupId: `${e.webhookId}.${task.token}`.slice(0, 128) })));
  if (page.last) await deps.continueLater({ ...task, after: page.last });
  return wake.length;
}

/** A stream record's key, as DynamoDB Streams gives it (KEYS_ONLY). */
export interface StreamKeys {
  pk?: { S?: string };
  sk?: { S?: string };
}

const FEED_PREFIX = 'FEED#';
const HEAD_PREFIX = 'H#';

/** The feed a head write belongs to, or undefined for any other item (the event source's filter sends heads only; this holds it anyway). */
export function feedOfHeadWrite(keys: StreamKeys | undefined): string | undefined {
  const pk = keys?.pk?.S;
  const sk = keys?.sk?.S;
  return pk?.startsWith(FEED_PREFIX) && sk?.startsWith(HEAD_PREFIX) ? pk.slice(FEED_PREFIX.length) : undefined;
}

/** Compares stream sequence numbers (decimal strings of any length). */
const later = (a: string, b: string): boolean => (a.length !== b.length ? a.length > b.length : a > b);

/** The scopes a batch of head writes moved, each once, with the latest sequence number of its writes as its token. */
export function scopesMoved(records: readonly { keys?: StreamKeys; sequence: string }[]): FanOutTask[] {
  const tokens = new Map<string, string>();
  for (const r of records) {
    const feed = feedOfHeadWrite(r.keys);
    if (feed === undefined) continue;
    const seen = tokens.get(feed);
    if (seen === undefined || later(r.sequence, seen)) tokens.set(feed, r.sequence);
  }
  return [...tokens].map(([feed, token]) => ({ feed, token }));
}
