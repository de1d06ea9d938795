/**
 * The read model of a table, for comparing two tables: every item, sorted by
 * key, without bookkeeping (versions, derivation stamps and counters, pending
 * work, tombstones, user→event links, guest shard records, recount tickets, summaries of buckets
 * that became empty, key slot records that hold no key), which a fresh load and a table kept
 * current by changes may legitimately differ in; each item's attributes in
 * sorted order (canonical()). An event's calendar history (SEQUENCE and
 * LAST-MODIFIED: lambdas/core/calendar-revision.ts) is set aside like the
 * versions it sits beside: it records what happened, which a fresh load
 * cannot know; test/integration/calendar-history.property.test.ts holds what
 * calendars need of it over the same change streams.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { INDEXES } from '../../lambdas/store/table/table.js';
import { writeDataset } from '../../local/loader.js';
import { ensureTable } from '../../local/dynalite.js';
import { scanTable } from '../../local/resync.js';

type Item = Record<string, unknown>;
// Feeds hold the history of changes, not the read model: a fresh load and a table kept current differ there by design.
// A guest shard record: a table kept by changes may mark shards a fresh load would not (a guest since gone); what a
// record must mark is checked on its own (shard-marks.ts).
const BOOKKEEPING_TYPES = new Set(['DERIVATION_SEQ', 'TOMBSTONE', 'USER_EVENT_LINK', 'FEED_HEAD', 'FEED_CHUNK', 'FEED_MEMBER', 'GUEST_SHARDS', 'GUEST_COUNT_TICKET', 'TALLY_TICKET']);
const BOOKKEEPING_ATTRIBUTES = ['version', 'gen', 'pending', 'pending_after', 'expires_at', 'tally_pending', 'tally_from', 'feed_note', 'ticket', 'counted', 'revealing'];
/** An event's calendar history: on its source item (`revision`) and on the event item (`sequence`, `modified_at`). */
export const CALENDAR_HISTORY_ATTRIBUTES = ['revision', 'sequence', 'modified_at'];
const SET_ASIDE = new Set([...BOOKKEEPING_ATTRIBUTES, ...CALENDAR_HISTORY_ATTRIBUTES]);
/** A day, month or year that no longer holds anything: a fresh load has no summary for it. */
const emptySummary = (i: Item) => (i.type === 'TALLY_SUMMARY' && !i.count) || (i.type === 'GUEST_COUNT_SUMMARY' && !i.yes && !i.maybe && !i.no);
/**
 * A user's key slot record that holds no key: the one a user's deletion closes (lambdas/store/keys/user-keys.ts, written
 * even for a user who never had a key, so a create that read the user before cannot take a slot after). A fresh load
 * writes one only for a user with active seeded keys; what it refuses is the key explorations' to check.
 */
const emptySlots = (i: Item) => i.type === 'KEY_COUNTER' && Object.keys((i.holders as object | undefined) ?? {}).length === 0;

export const scanAll = scanTable;

/**
 * The same value with every map's keys in sorted order. DynamoDB keeps no
 * attribute order: DynamoDB Local returns a map's attributes in an order that
 * depends on how the item was written (dynalite keeps the written order), and
 * the tests compare read models as JSON strings.
 */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array || value instanceof Set) return value;
  return Object.fromEntries(
    Object.entries(value)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, canonical(v)]),
  );
}

export function readModel(items: readonly Item[]): Item[] {
  return items
    .filter((i) => !BOOKKEEPING_TYPES.has(String(i.type)) && !i.deleted && !emptySummary(i) && !emptySlots(i))
    .map((i) => canonical(Object.fromEntries(Object.entries(i).filter(([k]) => !SET_ASIDE.has(k)))) as Item)
    .sort((a, b) => `${a.pk}\u0000${a.sk}`.localeCompare(`${b.pk}\u0000${b.sk}`));
}

/** Loads `dataset` into a new table on the same store and returns its read model. */
export async function freshLoadReadModel(client: DynamoDBDocumentClient, tableName: string, dataset: Dataset): Promise<Item[]> {
  await ensureTable(client, tableName);
  await writeDataset(client, tableName, dataset);
  return readModel(await scanAll(client, tableName));
}

/**
 * Every item any read path (a GSI) can reach, as it reaches it. A keys-only index (discovery's
 * place indexes) reaches the items its entries name: the route reads them by
 * key (lambdas/store/reads/search.ts), so each is counted as the item it is now.
 */
export async function reachable(client: DynamoDBDocumentClient, tableName: string): Promise<Item[]> {
  const out: Item[] = [];
  const table = new Map((await scanAll(client, tableName)).map((i) => [`${String(i.pk)}\u0000${String(i.sk)}`, i]));
  for (const index of Object.values(INDEXES)) {
    const entries = await scanAll(client, tableName, index.name);
    const item = (e: Item) => table.get(`${String(e.pk)}\u0000${String(e.sk)}`);
    // ALL and INCLUDE: the entries are what the reads get (INCLUDE's, without the write side's bookkeeping). An INCLUDE
    // index copies no `type` (the reads tell an entry's kind by its keys): the referee classifies by the item's own.
    if (index.projection === 'ALL') out.push(...entries);
    else if (index.projection === 'INCLUDE') out.push(...entries.map((e) => ({ ...e, type: item(e)?.type })));
    else out.push(...entries.map((e) => item(e) ?? e));
  }
  return out;
}
