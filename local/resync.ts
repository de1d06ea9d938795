/**
 * Resync (`npm run data:load -- FILE --replace [--dry-run]`): makes the table
 * hold exactly FILE's read model. It reads the whole table once (an operator's
 * tool, never on a request path), derives FILE's items with the full load's own
 * derivation, and writes what is new or changed and removes what FILE no
 * longer derives (PRODUCT P14).
 *
 * - Keys made by the key manager, the local quota's counters and derivation
 *   counters are left alone; FILE's `api_keys` are added only where missing.
 * - Versions are bookkeeping, not read model: an entity FILE still has keeps
 *   the version the table knew (so an older change arriving later stays
 *   stale), and one FILE no longer has becomes a tombstone that keeps its
 *   version (so an older change cannot bring it back).
 * - Run it with the ingest paused (docs/data-model.md): it does not take part
 *   in the derivations' ordering.
 */
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Dataset } from '../lambdas/core/dataset.js';
import { sameContent } from '../lambdas/store/item-content.js';
import { batchWriteAll, type BatchWriteOptions } from '../lambdas/store/batch-write.js';
import { INDEXES, PK, SK } from '../lambdas/store/table.js';
import { apiKeyItems, readModelItems } from '../lambdas/store/writer.js';

type Item = Record<string, unknown>;

/** Partitions that are not the read model of users, events and RSVPs. */
const UNTOUCHED_PARTITIONS = /^(APIKEY|USERKEYS|KEYID|KEYREQ|QUOTA|FEED)#/;
const UNTOUCHED_TYPES = new Set(['DERIVATION_SEQ', 'TOMBSTONE']);
const SOURCE_TYPES: Record<string, Kind> = { USER: 'users', EVENT_SOURCE: 'events', RSVP_SOURCE: 'rsvps' };
const INDEX_ATTRIBUTES: string[] = Object.values(INDEXES).flatMap((i) => [i.partitionKey, i.sortKey]);

type Kind = 'users' | 'events' | 'rsvps';
type Counts = Record<Kind, number>;

export interface ResyncPlan {
  added: Counts;
  changed: Counts;
  removed: Counts;
  puts: Item[];
  deletes: Item[];
}

const keyOf = (i: Item): string => `${String(i[PK])}\u0000${String(i[SK])}`;
const zero = (): Counts => ({ users: 0, events: 0, rsvps: 0 });

/** Every item of the table (consistently) or of one of its indexes, every page. */
export async function scanTable(client: DynamoDBDocumentClient, tableName: string, indexName?: string): Promise<Item[]> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    // Index scans cannot be consistent.
    const out = await client.send(new ScanCommand({ TableName: tableName, IndexName: indexName, ExclusiveStartKey: start, ConsistentRead: indexName === undefined }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Whether the table holds any user or event (a plain load refuses then). */
export async function holdsUsersOrEvents(client: DynamoDBDocumentClient, tableName: string): Promise<boolean> {
  let start: Record<string, unknown> | undefined;
  do {
    const out = await client.send(
      new ScanCommand({
        TableName: tableName,
        ExclusiveStartKey: start,
        FilterExpression: '#type IN (:user, :event) AND attribute_not_exists(deleted)',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':user': 'USER', ':event': 'EVENT_SOURCE' },
        ProjectionExpression: '#type',
      }),
    );
    if (out.Items?.length) return true;
    start = out.LastEvaluatedKey;
  } while (start);
  return false;
}

export function planResync(current: readonly Item[], dataset: Dataset): ResyncPlan {
  const plan: ResyncPlan = { added: zero(), changed: zero(), removed: zero(), puts: [], deletes: [] };
  const have = new Map(current.map((i) => [keyOf(i), i]));
  const target = new Map<string, Item>();
  for (const item of readModelItems(dataset).items as unknown as Item[]) {
    const old = have.get(keyOf(item));
    // A derivation counter the table has keeps its number: derived items carry numbers it handed out.
    if (old && UNTOUCHED_TYPES.has(String(item.type))) {
      target.set(keyOf(old), old);
      continue;
    }
    const kind = SOURCE_TYPES[String(item.type)];
    // A source keeps the version the table knew for it (tombstone or not).
    const next = kind && typeof old?.version === 'number' ? { ...item, version: Math.max(old.version, 0) } : item;
    target.set(keyOf(next), next);
    const oldLive = old !== undefined && !old.deleted && old.type !== 'TOMBSTONE';
    if (oldLive && sameContent(withoutPending(old), next)) continue;
    plan.puts.push(next);
    if (kind) plan[oldLive ? 'changed' : 'added'][kind]++;
  }
  for (const item of apiKeyItems(dataset) as unknown as Item[]) if (!have.has(keyOf(item))) plan.puts.push(item);

  for (const item of current) {
    if (target.has(keyOf(item)) || UNTOUCHED_PARTITIONS.test(String(item[PK])) || UNTOUCHED_TYPES.has(String(item.type))) continue;
    const kind = SOURCE_TYPES[String(item.type)];
    if (kind) {
      if (item.deleted) continue; // a tombstone stays, with its version
      plan.removed[kind]++;
      plan.puts.push(tombstoneOf(item));
    } else {
      plan.deletes.push({ [PK]: item[PK], [SK]: item[SK] });
    }
  }
  return plan;
}

export async function executeResync(client: DynamoDBDocumentClient, tableName: string, plan: ResyncPlan, opts?: BatchWriteOptions): Promise<void> {
  // Removals first: nothing FILE hides is visible while the rest is written.
  await batchWriteAll(client, tableName, [], opts, plan.deletes);
  await batchWriteAll(client, tableName, plan.puts, opts);
}

export function formatPlan(plan: ResyncPlan): string {
  const line = (c: Counts) => `${c.users} users, ${c.events} events, ${c.rsvps} rsvps`;
  return [`added: ${line(plan.added)}`, `changed: ${line(plan.changed)}`, `removed: ${line(plan.removed)}`, `items written: ${plan.puts.length}, items deleted: ${plan.deletes.length}`].join('\n');
}

function withoutPending(item: Item): Item {
  const { pending: _pending, pending_after: _after, ...rest } = item;
  return rest;
}

function tombstoneOf(item: Item): Item {
  const keep = [PK, SK, 'type', 'user_id', 'event_id', 'version'];
  const tomb = Object.fromEntries(Object.entries(item).filter(([k]) => keep.includes(k) && !INDEX_ATTRIBUTES.includes(k)));
  return { ...tomb, deleted: true };
}
