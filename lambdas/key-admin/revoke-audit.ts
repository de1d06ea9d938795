/**
 * The audit of a revoke that took effect (issue 45): one `Key revoked` line
 * naming the user id and the key id (never the key or its hash) and one
 * `revoked` count in KeyOperations, whoever revoked: the key-management
 * API, the operator CLI, a user's deletion (the key-management function the
 * ingest invokes, `data:apply`, a resync), a create's takeover, a reclaimed
 * slot, the sweep. The key store calls it once per revoke, the line claimed
 * on the record first (lambdas/store/keys/key-records.ts), so a crash and a retry
 * never write it twice.
 */
import type { RevokeAudit } from '../store/keys/key-store.js';
import type { LogFields, Logger } from '../http/logger.js';
import { DIMENSIONS, METRICS, type MetricsSink } from '../http/metrics.js';

/** `context`: fields of whoever is revoking (the IAM caller of a request, `operator` for the CLI), read at each line. */
export function revokeAudit(logger: Logger, metrics: MetricsSink, context: () => LogFields = () => ({})): RevokeAudit {
  return (revoked) => {
    metrics.publish({ [DIMENSIONS.operation]: 'revoked' }, [{ name: METRICS.keyOperations, unit: 'Count', value: 1 }]);
    logger.info('Key revoked', { ...context(), userId: revoked.userId, keyId: revoked.keyId, revokedAt: revoked.revokedAt, by: revoked.by });
  };
}
