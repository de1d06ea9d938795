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
 * records that should name them, a page's worth in one BatchGetItem round:
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
 * create that is still recording its plan key. Each action re-reads the
 * record it acts on (the retire's own read), so a decision made on the batch
 * read never acts on a key that changed since: the retire of a live key is
 * `unlessUsable`, and a plan key is deleted only once the key that could
 * hold it is refused.
 *
 * Bounded per run and resumable (the account may hold 10,000 API keys, the
 * function has 6 s, and API Gateway's management calls share 10 a second
 * per account): one run reads at most SWEEP_PAGES_PER_RUN pages of
 * GetApiKeys (500 keys each), or fewer when its time runs short, and saves
 * the position of the next page (the progress item, written conditionally
 * on the revision read, so two overlapping runs do not both go on). The
 * next run goes on from there; the run that reads the last page ends the
 * pass, and the one after starts the next. A page costs one GetApiKeys, five
 * BatchGetItems of 100 records, and the retires of what it deletes.
 */
import { STALE_CREATE_MS } from '../../core/key-rules.js';
import type { KeyRecordItem } from '../table/items.js';
import { parsePlanKeyName, type PlanKeyEntry } from './key-table.js';
import type { KeyStore } from './key-store.js';

/** GetApiKeys pages one run reads at most: 5,000 API keys, so a pass over AWS's default 10,000 takes two runs. */
export const SWEEP_PAGES_PER_RUN = 10;
/** What a run keeps of the invocation's time for its last page's retires and its answer, when it knows its time. */
export const SWEEP_RESERVE_MS = 2_000;

export interface SweepReport {
  /** API keys of the plan looked at (older than STALE_CREATE_MS). */
  checked: number;
  /** Younger ones, left for the next pass. */
  young: number;
  /** Kept: a live record names them. */
  kept: number;
  /** Deleted, by id. */
  deleted: string[];
  /** Tagged with the plan but not named for an owner and key: left alone, reported. */
  unnamed: string[];
  /** GetApiKeys pages this run read. */
  pages: number;
  /** This run read the pass's last page (the next run starts a new pass). */
  passEnded: boolean;
}

export interface SweepBounds {
  maxPages?: number;
  /** Time left in the invocation; no page is started with less than `reserveMs` left. */
  remainingMs?: () => number;
  reserveMs?: number;
}

export async function sweepPlanKeys(store: KeyStore, bounds: SweepBounds = {}): Promise<SweepReport> {
  const planKeys = store.planKeys;
  if (!planKeys?.listPage) throw new Error('the sweep needs an API Gateway client that lists the plan\'s API keys');
  const report: SweepReport = { checked: 0, young: 0, kept: 0, deleted: [], unnamed: [], pages: 0, passEnded: false };
  const maxPages = bounds.maxPages ?? SWEEP_PAGES_PER_RUN;
  const outOfTime = () => bounds.remainingMs !== undefined && bounds.remainingMs() < (bounds.reserveMs ?? SWEEP_RESERVE_MS);
  let progress = await store.sweepProgress();
  while (report.pages < maxPages && !outOfTime()) {
    const page = await planKeys.listPage(progress?.position);
    report.pages++;
    await sweepPage(store, page.entries, report);
    // Saved after the page's work: a run cut off mid-page does the page again (each action is idempotent).
    if (!(await store.saveSweepProgress(progress, page.position))) return report;
    progress = { ...(page.position ? { position: page.position } : {}), rev: (progress?.rev ?? 0) + 1 };
    if (!page.position) {
      report.passEnded = true;
      return report;
    }
  }
  return report;
}

async function sweepPage(store: KeyStore, entries: readonly PlanKeyEntry[], report: SweepReport): Promise<void> {
  const now = store.clock().getTime();
  const due: { entry: PlanKeyEntry; userId: string; keyId: string }[] = [];
  for (const entry of entries) {
    if (now - entry.createdAt.getTime() < STALE_CREATE_MS) {
      report.young++;
      continue;
    }
    report.checked++;
    const owner = parsePlanKeyName(entry.name);
    if (owner) due.push({ entry, ...owner });
    else report.unnamed.push(entry.id);
  }
  const records = await store.recordsOf(due);
  for (const { entry, userId, keyId } of due) await sweepOne(store, entry, userId, keyId, records.get(`${userId}/${keyId}`), report);
}

async function sweepOne(store: KeyStore, entry: PlanKeyEntry, userId: string, keyId: string, record: KeyRecordItem | undefined, report: SweepReport): Promise<void> {
  if (record?.plan_key_id === entry.id) {
    if (!record.revoked && !record.erased) {
      report.kept++;
      return;
    }
    // Its retire (a revoke, a deletion, a create's clean-up) died before deleting it: finished now.
    await store.retire(userId, keyId, { unlessUsable: false, by: 'revoke' });
    report.deleted.push(entry.id);
    return;
  }
  const retired = await store.retire(userId, keyId, { unlessUsable: true, by: 'stale create reclaimed' });
  if (retired.outcome === 'usable') {
    // Usable means its create recorded and attached a plan key: this one is kept only if that is it.
    if (retired.record.plan_key_id === entry.id) {
      report.kept++;
      return;
    }
  } else if (retired.flipped) {
    // A create that died before its key was usable: never shown, so nothing of it is kept but its id (as reconcile does).
    await store.erase(userId, keyId, 'stale create reclaimed');
  }
  await store.planKeys!.remove(entry.id);
  report.deleted.push(entry.id);
}
