/**
 * No plan key outlives its record (issue 45): the sweep the key-management
 * function runs on a schedule (lib/key-admin.ts), AWS only (locally there are
 * no plan keys).
 *
 * A create records its plan key's id on the key's record before attaching
 * it, so every retire after that deletes it (key-records.ts). Two crashes
 * still leave one nothing deletes: a create that dies between CreateApiKey
 * and recording the id (nothing names the API key), and a create racing its
 * user's deletion that records the id on the record the deletion already
 * erased, then dies before its own clean-up (the deletion is over, and
 * nothing reads an erased record again). The sweep lists the plan's API
 * keys, each named for its owner and key (`planKeyName`), and reads the
 * record that should name it:
 *
 * - named by a live record: kept;
 * - named by a revoked or erased record: the retire that record had is run
 *   again, which deletes the plan key (and writes the revoke's audit line if
 *   it was never written);
 * - named by no record: the key is retired as an abandoned create is
 *   (`unlessUsable`: the authorizer's item written revoked only where none
 *   exists, the record revoked or a tombstone put), so a create still running
 *   can no longer make it usable, then the plan key is deleted. A key found
 *   usable after all is left alone.
 *
 * Only API keys older than STALE_CREATE_MS are looked at: the rule a takeover
 * already rests on (a create is over, one way or the other, within a minute;
 * the key-management function's timeout is 6 s), so the sweep never races a
 * create that is still recording its plan key.
 */
import { STALE_CREATE_MS } from '../../core/key-rules.js';
import { parsePlanKeyName } from './key-table.js';
import type { KeyStore } from './key-store.js';

export interface SweepReport {
  /** API keys of the plan looked at (older than STALE_CREATE_MS). */
  checked: number;
  /** Younger ones, left for the next sweep. */
  young: number;
  /** Kept: a live record names them. */
  kept: number;
  /** Deleted, by id. */
  deleted: string[];
  /** Tagged with the plan but not named for an owner and key: left alone, reported. */
  unnamed: string[];
}

export async function sweepPlanKeys(store: KeyStore): Promise<SweepReport> {
  const planKeys = store.planKeys;
  if (!planKeys?.list) throw new Error('the sweep needs an API Gateway client that lists the plan\'s API keys');
  const report: SweepReport = { checked: 0, young: 0, kept: 0, deleted: [], unnamed: [] };
  const now = store.clock().getTime();
  for (const entry of await planKeys.list()) {
    if (now - entry.createdAt.getTime() < STALE_CREATE_MS) {
      report.young++;
      continue;
    }
    report.checked++;
    const owner = parsePlanKeyName(entry.name);
    if (!owner) {
      report.unnamed.push(entry.id);
      continue;
    }
    const { userId, keyId } = owner;
    const record = await store.record(userId, keyId);
    if (record?.plan_key_id === entry.id) {
      if (!record.revoked && !record.erased) {
        report.kept++;
        continue;
      }
      // Its retire (a revoke, a deletion, a create's clean-up) died before deleting it: finished now.
      await store.retire(userId, keyId, { unlessUsable: false, by: 'revoke' });
      report.deleted.push(entry.id);
      continue;
    }
    const retired = await store.retire(userId, keyId, { unlessUsable: true, by: 'stale create reclaimed' });
    if (retired.outcome === 'usable') {
      // Usable means its create recorded and attached a plan key: this one is kept only if that is it.
      if (retired.record.plan_key_id === entry.id) {
        report.kept++;
        continue;
      }
    } else if (retired.flipped) {
      // A create that died before its key was usable: never shown, so nothing of it is kept but its id (as reconcile does).
      await store.erase(userId, keyId, 'stale create reclaimed');
    }
    await planKeys.remove(entry.id);
    report.deleted.push(entry.id);
  }
  return report;
}
