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
 * and a Lambda has a timeout): one call makes about CLOSE_CALLS_PER_CALL
 * DynamoDB calls at most (each key's close counted at its most), fewer when
 * the invocation's time runs short, and answers whether it is done; the
 * caller calls again (settle.ts: between calls it checks its own time, and
 * queues a continuation when short). A key is closed by retiring it and
 * then erasing its record, so a closed key is never listed again; a call
 * that stops before the end saves the sort key of the last record it walked
 * past (the KEY_CLOSE item, moved forward only), and the next starts after
 * it, so no call walks again what an earlier one closed; the item is
 * deleted once the close is done. Each key is one step, `closeKey`, which
 * every per-key clean-up joins (KeyRecords.closeHoldings: a key's webhooks):
 * through the retire, or directly for a record already revoked.
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
import type { KeyRecordItem } from '../table/items.js';
import { KEY_RECORD_PREFIX } from '../table/table.js';
import { KeyStore, type PlanKeys, type RevokeAudit } from './key-store.js';
import type { WebhookAudit } from '../webhooks/key-webhooks.js';

/**
 * DynamoDB calls one close call makes at most, about: 600 is 2.4 s at 4 ms a
 * call (150 revoked keys, or 20 live ones with 5 webhooks each), inside the key-management function's 6 s with room for the few
 * API Gateway DeleteApiKey calls of live keys' plan keys (held by
 * test/integration/keys-close-many-revoked.test.ts at 3,000 calls an
 * invocation, and with 10,000 revoked keys by keys-close-bounded.test.ts).
 */
export const CLOSE_CALLS_PER_CALL = 600;
/**
 * A key's close at its most: the retire's 9 calls (record, authorizer item,
 * flip, audit claim, slot read and write, plan key's id), its webhooks'
 * close (closeHoldings: the key's places read and closed, and per webhook,
 * at most 5, its tombstone and its scope entry: 17) and the erase's 3.
 */
export const FULL_CLOSE_CALLS = 29;
/**
 * A record read already revoked, with no plan key: its webhooks' places
 * read (closed by its revoke), its audit line claimed if never written, the
 * authorizer's item, the record. (A revoke cut off before closing the
 * key's webhooks leaves them to this close, a few calls more, once.)
 */
export const REVOKED_CLOSE_CALLS = 4;
/** Records read per Query of the walk (a Query reads at most 1 MB). */
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
  /** DynamoDB calls at most, about (default CLOSE_CALLS_PER_CALL). */
  maxCalls?: number;
  /** Time left in the invocation; the close stops between keys when less than `reserveMs` is left. */
  remainingMs?: () => number;
  reserveMs?: number;
}

/**
 * One key of a deleted user, closed: retired (the authorizer's item revoked,
 * its webhooks closed, the slot, the plan key), then erased. A record `read`
 * revoked and naming no plan key was retired by its revoke: only what else
 * it holds (closeHoldings) and its erasure are left. Answers the calls it may have made, at
 * most (what the caller's bound counts).
 */
export async function closeKey(store: KeyStore, userId: string, keyId: string, read?: KeyRecordItem): Promise<number> {
  if (read?.revoked && !read.plan_key_id) {
    await store.closeHoldings(userId, keyId, 'user deleted');
    await store.erase(userId, keyId, 'user deleted', read);
    return REVOKED_CLOSE_CALLS;
  }
  await store.retire(userId, keyId, { unlessUsable: false, by: 'user deleted' });
  await store.erase(userId, keyId, 'user deleted');
  return FULL_CLOSE_CALLS;
}

/** One bounded call of the close of the user's deletion at `version` (file comment). */
export async function closeUserKeys(store: KeyStore, userId: string, version: number, bounds: CloseBounds = {}): Promise<CloseProgress> {
  const user = await userItemById(store.client, store.tableName, userId);
  // Absent: keys whose user the table never had (a resync's), closed all the same.
  if (user && (!user.deleted || user.version > version)) return { done: true, closed: 0, superseded: true };
  const maxCalls = bounds.maxCalls ?? CLOSE_CALLS_PER_CALL;
  const outOfTime = () => bounds.remainingMs !== undefined && bounds.remainingMs() < (bounds.reserveMs ?? CLOSE_RESERVE_MS);
  let closed = 0;
  let spent = 0;
  /** Closes one key if the bound leaves room for it at its most; false when it does not (the call stops there). */
  const step = async (keyId: string, read?: KeyRecordItem): Promise<boolean> => {
    const most = read?.revoked && !read.plan_key_id ? REVOKED_CLOSE_CALLS : FULL_CLOSE_CALLS;
    if ((closed > 0 && spent + most > maxCalls) || outOfTime()) return false;
    spent += await closeKey(store, userId, keyId, read);
    closed++;
    return true;
  };
  // The holders first, every call: the keys that can authenticate, and a create still in flight, whose record may land behind the walk.
  for (const keyId of await store.closeSlots(userId, version)) if (!(await step(keyId))) return { done: false, closed };
  const from = await store.closeProgress(userId, version);
  let after = from;
  let walked: string | undefined;
  do {
    const page = await store.recordPage(userId, { limit: RECORD_PAGE, after });
    spent++;
    for (const record of page.records) {
      if (madeBefore(record.user_version, version) && !(await step(record.key_id, record))) {
        if (walked) await store.saveCloseProgress(userId, version, walked);
        return { done: false, closed };
      }
      walked = `${KEY_RECORD_PREFIX}${record.key_id}`;
    }
    after = page.last;
  } while (after);
  if (from !== undefined) await store.forgetCloseProgress(userId, version);
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
  opts: { clock?: Clock; planKeys?: PlanKeys; revokeAudit?: RevokeAudit; webhookAudit?: WebhookAudit } = {},
): (userId: string, version: number) => Promise<boolean> {
  const store = new KeyStore(client, tableName, { clock: opts.clock ?? systemClock, planKeys: opts.planKeys, audit: opts.revokeAudit, webhookAudit: opts.webhookAudit });
  return async (userId, version) => (await closeUserKeys(store, userId, version)).done;
}
