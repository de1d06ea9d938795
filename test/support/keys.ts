/**
 * What the key tests share: deterministic "random" characters (so a test
 * knows the key a create makes even when the create fails), the question
 * "does this key authenticate?" asked of the real authorizer, a dataset
 * without a user (a resync after their deletion), and a user's
 * slot record as stored.
 */
import type { Dataset } from '../../lambdas/core/dataset.js';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import { authorize } from '../../lambdas/core/authorize.js';
import type { ApiKeyReader } from '../../lambdas/core/ports.js';
import { NotAuthenticatedError } from '../../lambdas/core/errors.js';
import type { KeyCounterItem } from '../../lambdas/store/table/items.js';
import { keys } from '../../lambdas/store/table/table.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Base62 characters from a seed and a counter: the same sequence every run. */
export function seededRandom(seed: string): (length: number) => string {
  let n = 0;
  return (length) => {
    let out = '';
    while (out.length < length) {
      const bytes = createHash('sha256').update(`${seed}:${n++}`).digest();
      for (const b of bytes) if (out.length < length && b < 248) out += BASE62[b % 62];
    }
    return out;
  };
}

/**
 * The keys a KeyManager with `seededRandom(seed)` makes, in order: each create
 * draws a 12-character id tail, the 40-character key, and with plan keys a
 * 32-character usage identifier.
 */
export function keysOf(seed: string, creates: number, opts: { planKeys?: boolean } = {}): string[] {
  const random = seededRandom(seed);
  return Array.from({ length: creates }, () => {
    random(12);
    const key = `pk_${random(40)}`;
    if (opts.planKeys) random(32);
    return key;
  });
}

/** Whether the authorizer lets the key in (any scope it holds): 401 is false, anything else it answers is true. */
export async function authenticates(reader: ApiKeyReader, key: string, at = new Date('2026-11-21T12:00:00Z')): Promise<boolean> {
  try {
    await authorize(reader, { headers: { 'x-events-api-key': key }, requiredScope: 'events:read' }, 'events', at);
    return true;
  } catch (error) {
    if (error instanceof NotAuthenticatedError) return false;
    throw error;
  }
}

export async function slotsOf(client: DynamoDBDocumentClient, tableName: string, userId: string): Promise<KeyCounterItem | undefined> {
  return (await client.send(new GetCommand({ TableName: tableName, Key: keys.keyCounter(userId), ConsistentRead: true }))).Item as KeyCounterItem | undefined;
}

/** A dataset without a user: their events, the RSVPs to those and their own, and their keys left out (a resync's file after the user's deletion). */
export function withoutUser(d: Dataset, userId: string): Dataset {
  return {
    ...d,
    users: d.users.filter((u) => u.id !== userId),
    events: d.events.filter((e) => e.creator_id !== userId),
    rsvps: (d.rsvps ?? []).filter((r) => r.user_id !== userId && d.events.find((e) => e.id === r.event_id)?.creator_id !== userId),
    api_keys: (d.api_keys ?? []).filter((k) => k.user_id !== userId),
  };
}
