/**
 * A deleted user's keys (PRODUCT P3): every key of theirs answers 401 from
 * the deletion on (the authorizer also refuses a key whose user is not live:
 * lambdas/store/reads/api-key-reads.ts), and their items keep nothing of
 * them but each key's id (key-records.ts, `erase`); their API Gateway plan
 * keys are deleted. Run by the settle of the user's tombstone before its
 * cascade (settle.ts), so by the time the deletion is applied its keys are
 * closed, and a deletion that dies half-way is finished by its redelivery;
 * run by a resync for the users it removes (local/resync.ts).
 *
 * Bounded per call and resumable (a user may have revoked thousands of keys,
 * and a Lambda has a timeout): one call closes at most CLOSE_KEYS_PER_CALL
 * keys, or fewer when the invocation's time runs short, and answers whether
 * it is done; the caller calls again (settle.ts: between calls it checks its
 * own time, and queues a continuation when short). The progress is in the
 * table: a key is closed by retiring it and then erasing its record, and an
 * erased record is never listed again, so the next call starts with the
 * first key not yet closed. Each key is one step, `closeKey`, which every
 * per-key clean-up joins through the retire (KeyStoreOptions.cleanups: a
 * key's webhooks, say).
 *
 * Version-checked, like the change path (a late delivery of an older
 * change changes nothing): the close of the deletion at version V acts only
 * while the user is still deleted at V (a user re-created since, or deleted
 * again at a newer version, is that version's to close), and even then only
 * on the keys made for the user as it was at V or before (key-rules.ts,
 * `madeBefore`): a close that runs late, after the user was re-created and
 * made a key, leaves that key alone, even if the re-creation lands while it
 * runs.
 *
 * Closing the slots first (at the deletion's version) stops any create that
 * read the user before the deletion from taking one afterwards; a create
 * that took one already is named by it, so its key is retired too, record
 * written or not. The slots' holders (the keys that can authenticate, at
 * most the limit) are closed first, then every other record in key id order.
 */
import { madeBefore } from '../../core/key-rules.js';
import { systemClock, type Clock } from '../../core/clock.js';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { userItemById } from '../table/user-lookup.js';
import { KeyStore, type KeyCleanup, type PlanKeys, type RevokeAudit } from './key-store.js';

/**
 * Keys one call closes at most. A key's close is at most 12 sequential
 * DynamoDB calls (a live key with a plan key: the retire's 9, the erase's 3)
 * and one API Gateway DeleteApiKey; a revoked key's, 6. So a call is at most
 * about 600 DynamoDB calls, 2.4 s at 4 ms a call, inside the key-management
 * function's 6 s with room for a few plan-key deletions (held by
 * test/integration/keys-close-many-revoked.test.ts at 3,000 calls an
 * invocation, and with 10,000 revoked keys by keys-close-bounded.test.ts).
 */
export const CLOSE_KEYS_PER_CALL = 50;
/** Records read per Query of the walk (erased ones are skipped, but read). */
const RECORD_PAGE = 100;
/** What a call keeps of the invocation's time for answering, when it knows its time. */
export const CLOSE_RESERVE_MS = 1_500;

export interface CloseProgress {
  /** Every key of the deletion is closed, or the deletion no longer stands (`superseded`): call no more. */
  done: boolean;
  /** Keys this call closed. */
  closed: number;
  /** The user is not deleted at this version (live again, or deleted at a newer one): nothing was touched. */
  superseded?: true;
}

export interface CloseBounds {
  /** Keys closed at most (default CLOSE_KEYS_PER_CALL). */
  maxKeys?: number;
  /** Time left in the invocation; the close stops between keys when less than `reserveMs` is left. */
  remainingMs?: () => number;
  reserveMs?: number;
}

/** One key of a deleted user, closed: retired (the authorizer's item revoked, the clean-ups, the slot, the plan key), then erased. */
export async function closeKey(store: KeyStore, userId: string, keyId: string): Promise<void> {
  await store.retire(userId, keyId, { unlessUsable: false, by: 'user deleted' });
  await store.erase(userId, keyId, 'user deleted');
}

/** One bounded call of the close of the user's deletion at `version` (file comment). */
export async function closeUserKeys(store: KeyStore, userId: string, version: number, bounds: CloseBounds = {}): Promise<CloseProgress> {
  const user = await userItemById(store.client, store.tableName, userId);
  // Absent: keys whose user the table never had (a resync's), closed all the same.
  if (user && (!user.deleted || user.version > version)) return { done: true, closed: 0, superseded: true };
  const maxKeys = bounds.maxKeys ?? CLOSE_KEYS_PER_CALL;
  const outOfTime = () => bounds.remainingMs !== undefined && bounds.remainingMs() < (bounds.reserveMs ?? CLOSE_RESERVE_MS);
  let closed = 0;
  const step = async (keyId: string): Promise<boolean> => {
    if (closed >= maxKeys || outOfTime()) return false;
    await closeKey(store, userId, keyId);
    closed++;
    return true;
  };
  for (const keyId of await store.closeSlots(userId, version)) if (!(await step(keyId))) return { done: false, closed };
  let after: string | undefined;
  do {
    const page = await store.recordPage(userId, { limit: RECORD_PAGE, after });
    for (const record of page.records) {
      if (!madeBefore(record.user_version, version)) continue;
      if (!(await step(record.key_id))) return { done: false, closed };
    }
    after = page.last;
  } while (after);
  return { done: true, closed };
}

/**
 * What the change path runs for a user's deletion in process (the local
 * server, `data:apply`, tests): one bounded call of closeUserKeys on the
 * applier's table, true once done (`revokeAudit`: each key's audit line).
 */
export function userKeysCloser(
  client: DynamoDBDocumentClient,
  tableName: string,
  opts: { clock?: Clock; planKeys?: PlanKeys; revokeAudit?: RevokeAudit; cleanups?: readonly KeyCleanup[] } = {},
): (userId: string, version: number) => Promise<boolean> {
  const store = new KeyStore(client, tableName, { clock: opts.clock ?? systemClock, planKeys: opts.planKeys, audit: opts.revokeAudit, cleanups: opts.cleanups });
  return async (userId, version) => (await closeUserKeys(store, userId, version)).done;
}
