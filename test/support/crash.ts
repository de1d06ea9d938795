/**
 * An applier that dies right after its `crashAfter`-th DynamoDB call: the
 * call lands, its answer is lost, no later step of this attempt happens. For
 * the change-path properties that redeliver a change after any crash point.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Change } from '../../lambdas/core/changes.js';
import { ChangeApplier, type ApplierOptions } from '../../lambdas/store/changes/applier.js';

/** Applies `change` through a fresh client that dies after `crashAfter` calls; true when the change needed fewer. */
export async function applyUntilCrash(dying: DynamoDBDocumentClient, table: string, change: Change, crashAfter: number, opts: ApplierOptions): Promise<boolean> {
  let calls = 0;
  dying.middlewareStack.add(
    (next) => async (args) => {
      const out = await next(args);
      if (++calls === crashAfter) throw new Error('crash');
      return out;
    },
    { step: 'initialize', name: 'crash' },
  );
  try {
    await new ChangeApplier(dying, table, opts).apply(change);
    return true;
  } catch (error) {
    // Only the injected crash is expected: every other failure of the applier fails the test.
    if ((error as Error).message !== 'crash') throw error;
    return false;
  } finally {
    dying.destroy();
  }
}
