/**
 * What the key-management function does besides answering the API: its
 * tasks, each a direct invocation (no API Gateway), under the same role, the
 * only role but the authorizer's that may read a key record (PRODUCT P3).
 *
 * - `close`: a user's deletion closes their keys (lambdas/store/keys/user-keys.ts).
 *   The ingest invokes it synchronously (RequestResponse) while it settles
 *   the user's tombstone, before the cascade, and its role may do nothing
 *   else with key items: it holds lambda:InvokeFunction on this function and
 *   no DynamoDB action on a key partition. One invocation closes a bounded
 *   share of the keys (user-keys.ts: CLOSE_KEYS_PER_CALL, and the
 *   invocation's time) and answers `done`; the ingest invokes it again until
 *   done. A throttle inside it (the table, API Gateway's plan-key calls)
 *   answers `throttled` rather than failing the function: the ingest backs
 *   off as for its own throttles, and the function's Errors alarm stays for
 *   real failures. Any other failure is a function error, which fails the
 *   change (SQS delivers it again). Every key it revokes is audited here
 *   (revoke-audit.ts).
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
import { isThrottle } from '../store/table/throttling.js';
import { errorFields, type Logger } from '../http/logger.js';

export const keyTask = z.discriminatedUnion('task', [
  z.object({ task: z.literal('close'), userId: z.string().regex(USER_ID_PATTERN), version: z.number().int().nonnegative() }).strict(),
  z.object({ task: z.literal('sweep') }).strict(),
]);
export type KeyTask = z.infer<typeof keyTask>;

/** A close's answer: `done` once every key of the deletion is closed; `throttled`: stopped on a throttle, call again later. */
export interface CloseTaskResult {
  task: 'close';
  userId: string;
  done: boolean;
  closed: number;
  throttled?: true;
}

export type KeyTaskResult = CloseTaskResult | ({ task: 'sweep' } & SweepReport);

/** Whether an invocation is a task (else an API Gateway request). */
export function isKeyTask(event: unknown): boolean {
  return typeof event === 'object' && event !== null && 'task' in event;
}

/** The invocation's time left, when Lambda's context gives it (absent in tests that invoke the function as a plain call). */
export type RemainingMs = (() => number) | undefined;

/** Runs a task; an invalid one throws (a function error: the ingest's change fails and comes back). */
export function buildKeyTasks(store: KeyStore, logger: Logger): (event: unknown, remainingMs?: RemainingMs) => Promise<KeyTaskResult> {
  return async (event, remainingMs) => {
    const parsed = keyTask.safeParse(event);
    if (!parsed.success) throw new Error(`Not a key task: ${z.prettifyError(parsed.error)}`);
    const task = parsed.data;
    if (task.task === 'close') {
      const { userId, version } = task;
      try {
        const progress = await closeUserKeys(store, userId, version, { remainingMs });
        logger.info(progress.done ? 'User keys closed' : 'User keys partly closed; the ingest calls again', { userId, version, closed: progress.closed, ...(progress.superseded ? { superseded: true } : {}) });
        return { task: 'close', userId, done: progress.done, closed: progress.closed };
      } catch (error) {
        if (!isThrottle(error)) throw error;
        logger.warn('User keys close throttled; the ingest calls again later', { userId, version, ...errorFields(error) });
        return { task: 'close', userId, done: false, closed: 0, throttled: true };
      }
    }
    const report = await sweepPlanKeys(store, { remainingMs });
    logger.info('Plan keys swept', { checked: report.checked, young: report.young, kept: report.kept, deleted: report.deleted, unnamed: report.unnamed, pages: report.pages, passEnded: report.passEnded });
    return { task: 'sweep', ...report };
  };
}
