/**
 * What the key-management function does besides answering the API: its
 * tasks, each a direct invocation (no API Gateway), under the same role, the
 * only role but the authorizer's that may read a key record (PRODUCT P3).
 *
 * - `close`: a user's deletion closes their keys (lambdas/store/keys/user-keys.ts).
 *   The ingest invokes it synchronously (RequestResponse) while it settles
 *   the user's tombstone, before the cascade, and its role may do nothing
 *   else with key items: it holds lambda:InvokeFunction on this function and
 *   no DynamoDB action on a key partition. A failure (a function error, a
 *   throttle, a timeout) fails the change, which SQS delivers again; closing
 *   is idempotent, so a redelivery finishes what a failed one left. Every key
 *   it revokes is audited here (revoke-audit.ts).
 * - `sweep`: deletes the plan keys no record holds any more
 *   (lambdas/store/keys/plan-key-sweep.ts); run by a schedule (lib/key-admin.ts).
 *
 * Locally (the local server, `data:apply`, a resync) the same closing runs in
 * process: there is no IAM to keep apart.
 */
import * as z from 'zod';
import { USER_ID_PATTERN } from '../core/ids.js';
import type { KeyStore } from '../store/keys/key-store.js';
import { sweepPlanKeys, type SweepReport } from '../store/keys/plan-key-sweep.js';
import { closeUserKeys } from '../store/keys/user-keys.js';
import type { Logger } from '../http/logger.js';

export const keyTask = z.discriminatedUnion('task', [
  z.object({ task: z.literal('close'), userId: z.string().regex(USER_ID_PATTERN), version: z.number().int().nonnegative() }).strict(),
  z.object({ task: z.literal('sweep') }).strict(),
]);
export type KeyTask = z.infer<typeof keyTask>;

export type KeyTaskResult = { task: 'close'; userId: string } | ({ task: 'sweep' } & SweepReport);

/** Whether an invocation is a task (else an API Gateway request). */
export function isKeyTask(event: unknown): boolean {
  return typeof event === 'object' && event !== null && 'task' in event;
}

/** Runs a task; an invalid one throws (a function error: the ingest's change fails and comes back). */
export function buildKeyTasks(store: KeyStore, logger: Logger): (event: unknown) => Promise<KeyTaskResult> {
  return async (event) => {
    const parsed = keyTask.safeParse(event);
    if (!parsed.success) throw new Error(`Not a key task: ${z.prettifyError(parsed.error)}`);
    const task = parsed.data;
    if (task.task === 'close') {
      await closeUserKeys(store, task.userId, task.version);
      logger.info('User keys closed', { userId: task.userId, version: task.version });
      return { task: 'close', userId: task.userId };
    }
    const report = await sweepPlanKeys(store);
    logger.info('Plan keys swept', { checked: report.checked, young: report.young, kept: report.kept, deleted: report.deleted, unnamed: report.unnamed });
    return { task: 'sweep', ...report };
  };
}
