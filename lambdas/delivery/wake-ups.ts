/**
 * The webhooks' queues as the functions use them (PRODUCT P18; lib/webhooks.ts):
 *
 * - the wake-up queue, SQS FIFO: a message says "deliver what this webhook
 *   has not had yet". Its message group is the webhook, so SQS hands a
 *   group's messages out one at a time, in order, and no two deliveries of
 *   a webhook run at once, while other groups go on (one delivery in
 *   flight per webhook; a slow endpoint holds its own group only). Its
 *   deduplication id is the one the sender gives (fan-out.ts: the webhook
 *   and the stream records that caused it), so a stream batch retried
 *   within SQS's 5-minute deduplication interval wakes each webhook once.
 * - the fan-out's queue, SQS standard: the rest of a scope's webhooks
 *   (a FanOutTask), read a page at a time by the fan-out function.
 *
 * Both are sent in batches of ten (SendMessageBatch's limit); an entry the
 * queue refused is sent again, and still refused it fails the call, so the
 * caller's message or stream batch comes back (nothing is dropped).
 */
import { SendMessageBatchCommand, type SendMessageBatchRequestEntry, type SQSClient } from '@aws-sdk/client-sqs';
import * as z from 'zod';
import { WEBHOOK_ID_PATTERN } from '../core/webhook-rules.js';
import type { FanOutTask, Nudge } from './fan-out.js';

/** A wake-up's body: the webhook again (its group names it too; both must agree). */
export const wakeUpBody = z.strictObject({ webhookId: z.string().regex(WEBHOOK_ID_PATTERN) });
export type WakeUp = z.infer<typeof wakeUpBody>;

/** A continuation of a scope's fan-out. */
export const fanOutTaskBody = z.strictObject({ feed: z.string().min(1).max(1024), token: z.string().min(1).max(128), after: z.string().min(1).max(64).optional() });

/** SendMessageBatch takes at most ten entries. */
const BATCH = 10;
/** Sends of entries the queue refused (throttled, an internal error) before the call fails. */
const RESENDS = 3;

/** A FIFO deduplication id: at most 128 characters of SQS's set (letters, digits, punctuation). */
export function dedupId(id: string): string {
  return id.replace(/[^\x21-\x7e]/g, '_').slice(0, 128);
}

export function wakeUpEntry(nudge: Nudge, index: number): SendMessageBatchRequestEntry {
  return { Id: String(index), MessageBody: JSON.stringify({ webhookId: nudge.webhookId } satisfies WakeUp), MessageGroupId: nudge.webhookId, MessageDeduplicationId: dedupId(nudge.dedupId) };
}

async function sendAll(client: Pick<SQSClient, 'send'>, queueUrl: string, entries: SendMessageBatchRequestEntry[]): Promise<void> {
  for (let i = 0; i < entries.length; i += BATCH) {
    let pending = entries.slice(i, i + BATCH);
    for (let attempt = 0; pending.length; attempt++) {
      const out = await client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: pending }));
      const failed = out.Failed ?? [];
      if (!failed.length) break;
      // A sender's fault (a malformed entry) is not helped by sending it again.
      if (attempt + 1 >= RESENDS || failed.some((f) => f.SenderFault)) throw new Error(`SQS refused ${failed.length} message(s): ${failed.map((f) => `${f.Code}: ${f.Message ?? ''}`).join('; ')}`);
      const ids = new Set(failed.map((f) => f.Id));
      pending = pending.filter((e) => ids.has(e.Id));
    }
  }
}

/** Wakes webhooks: one FIFO message each, in its own group. */
export function sqsWakeUps(client: Pick<SQSClient, 'send'>, queueUrl: string): (nudges: readonly Nudge[]) => Promise<void> {
  return (nudges) => sendAll(client, queueUrl, nudges.map(wakeUpEntry));
}

/** Queues the rest of scopes' fan-outs on the fan-out's own queue. */
export function sqsFanOutTasks(client: Pick<SQSClient, 'send'>, queueUrl: string): (tasks: readonly FanOutTask[]) => Promise<void> {
  return (tasks) => sendAll(client, queueUrl, tasks.map((task, i) => ({ Id: String(i), MessageBody: JSON.stringify(task) })));
}
