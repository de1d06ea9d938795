/**
 * DynamoDB's TTL as an adversary: it deletes an item whose `expires_at`
 * (Unix seconds) has passed, at an unspecified time after that (typically
 * within days), and until then reads still return it. So a test may delete,
 * at any point it chooses, anything whose expiry is before that point's
 * time; and since time may pass between two deliveries of a change (a
 * redelivery comes seconds or days later), a sweep "at `at`" models every
 * moment up to `at` at once.
 */
import { DeleteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TTL_ATTRIBUTE } from '../../lambdas/store/table/table.js';
import { scanAll } from './read-model.js';

/** Far enough that every expiry the write side sets has passed: "any time later". */
export const EVERYTHING_EXPIRED = new Date('2100-01-01T00:00:00.000Z');

/** 29 days after `now`: every tombstone and marker expired, but no feed chunk (kept 31 days), within a cursor's 30 days. */
export const withinRetention = (now: Date): Date => new Date(now.getTime() + 29 * 86_400_000);

/** Deletes every item whose expiry is before `at`; answers their keys, `pk sk`. `items`: the table's items now, if the caller has them. */
export async function sweepExpired(client: DynamoDBDocumentClient, table: string, at: Date = EVERYTHING_EXPIRED, items?: readonly Record<string, unknown>[]): Promise<string[]> {
  const gone: string[] = [];
  for (const item of items ?? (await scanAll(client, table))) {
    const expires = item[TTL_ATTRIBUTE];
    if (typeof expires === 'number' && expires < at.getTime() / 1000) {
      await client.send(new DeleteCommand({ TableName: table, Key: { pk: item.pk, sk: item.sk } }));
      gone.push(`${String(item.pk)} ${String(item.sk)}`);
    }
  }
  return gone;
}
