/**
 * Write capacity as DynamoDB bills it, from an item's image before and after
 * a write: the table write plus every global secondary index write, which
 * dynalite's ConsumedCapacity leaves out. Pure; unit-tested
 * (test/unit/write-billing.test.ts); `npm run bench` meters every write with it.
 *
 * Rules (AWS, "Item sizes and formats" and "Provisioned throughput
 * considerations for Global Secondary Indexes",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations.Writes):
 * - a write unit per 1 KB of the larger of the item's old and new size (at least 1);
 * - a condition that fails still costs the write (by the stored item's size, at least 1);
 * - per GSI, on what it copies of the item (its projection: all of it, the
 *   keys and the listed attributes, or the keys only; an entry is billed by
 *   that size): a new entry is one write, a removed one is one write, a
 *   changed key is two (delete and put), a change of what it copies under
 *   the same key is one, a change of nothing it copies or of an item in the
 *   index neither before nor after is none.
 */
import { PK, SK } from '../lambdas/store/table/indexes.js';

type Item = Record<string, unknown>;

export interface IndexKeys {
  partitionKey: string;
  sortKey: string;
}

/** DynamoDB's size of an item, in bytes. */
export function itemSize(item: Item): number {
  return Object.entries(item).reduce((n, [name, value]) => n + Buffer.byteLength(name) + valueSize(value), 0);
}

function valueSize(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return Math.ceil(significantDigits(value) / 2) + 1;
  if (value instanceof Set) return [...value].reduce((n: number, v) => n + valueSize(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce((n: number, v) => n + 1 + valueSize(v), 0);
  if (typeof value === 'object') return 3 + Object.entries(value as Item).reduce((n, [k, v]) => n + 1 + Buffer.byteLength(k) + valueSize(v), 0);
  return Buffer.byteLength(String(value));
}

function significantDigits(n: number): number {
  const digits = String(Math.abs(n)).replace('.', '').replace(/e.*$/, '').replace(/^0+/, '');
  return Math.max(1, digits.replace(/0+$/, '').length);
}

const units = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

const keyOf = (item: Item | undefined, index: IndexKeys): string | undefined => {
  if (!item) return undefined;
  const pk = item[index.partitionKey];
  const sk = item[index.sortKey];
  return pk === undefined || sk === undefined ? undefined : `${String(pk)}\u0000${String(sk)}`;
};

export interface WriteBill {
  table: number;
  indexes: number;
  total: number;
}

/**
 * An index as the bill sees it: its keys, and what it copies. ALL (the
 * default) copies the item; INCLUDE its keys and `nonKeyAttributes`;
 * KEYS_ONLY only the keys, so an index write happens only when what it
 * copies changes, and an entry is the size of what it copies.
 */
export interface IndexPartitions extends IndexKeys {
  readonly name?: string;
  readonly projection?: 'ALL' | 'INCLUDE' | 'KEYS_ONLY';
  readonly nonKeyAttributes?: readonly string[];
}

/** The table's own key attributes: every index entry copies them. */
const TABLE_KEYS = [PK, SK];

/** What an index entry holds of an item (its projection). */
function projected(item: Item, index: IndexPartitions): Item {
  if ((index.projection ?? 'ALL') === 'ALL') return item;
  const kept = new Set([...TABLE_KEYS, index.partitionKey, index.sortKey, ...(index.projection === 'INCLUDE' ? (index.nonKeyAttributes ?? []) : [])]);
  return Object.fromEntries(Object.entries(item).filter(([name]) => kept.has(name)));
}

/** Write units billed to one partition: the base table's (`pk`) or an index's (`{index} {its partition key}`). */
export interface PartitionUnits {
  partition: string;
  units: number;
}

/**
 * One index's writes for one table write, where each lands: an entry removed
 * in its old index partition, one written in its new one, a changed entry
 * under the same key where it is; nothing when what the index copies is
 * unchanged. The single rule writeBill and partitionBill both sum.
 */
function indexWrites(before: Item | undefined, after: Item | undefined, index: IndexPartitions): PartitionUnits[] {
  const was = keyOf(before, index);
  const is = keyOf(after, index);
  if (was === undefined && is === undefined) return [];
  const at = (item: Item) => `${index.name ?? index.partitionKey} ${String(item[index.partitionKey])}`;
  const entry = (item: Item) => units(itemSize(projected(item, index)));
  if (was !== undefined && is !== undefined && was === is) {
    const old = projected(before!, index);
    const now = projected(after!, index);
    if (JSON.stringify(sorted(old)) === JSON.stringify(sorted(now))) return [];
    return [{ partition: at(after!), units: units(Math.max(itemSize(old), itemSize(now))) }];
  }
  return [...(was !== undefined ? [{ partition: at(before!), units: entry(before!) }] : []), ...(is !== undefined ? [{ partition: at(after!), units: entry(after!) }] : [])];
}

/** What one write costs: `after` undefined for a delete; `failed` when its condition did not hold. */
export function writeBill(before: Item | undefined, after: Item | undefined, indexes: readonly IndexPartitions[], failed = false): WriteBill {
  if (failed) return { table: units(before ? itemSize(before) : 0), indexes: 0, total: units(before ? itemSize(before) : 0) };
  const table = units(Math.max(before ? itemSize(before) : 0, after ? itemSize(after) : 0));
  const indexUnits = indexes.flatMap((index) => indexWrites(before, after, index)).reduce((n, w) => n + w.units, 0);
  return { table, indexes: indexUnits, total: table + indexUnits };
}

function sorted(item: Item): Item {
  return Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/**
 * The same bill as writeBill, split by the partition each unit lands in: the
 * table's write in the item's own partition, each index's writes where
 * indexWrites puts them. A partition's throughput limit (1,000 write units a
 * second, index partitions as well) applies to these sums.
 */
export function partitionBill(pk: string, before: Item | undefined, after: Item | undefined, indexes: readonly IndexPartitions[], failed = false): PartitionUnits[] {
  const out: PartitionUnits[] = [];
  const add = (partition: string, n: number) => {
    const hit = out.find((p) => p.partition === partition);
    if (hit) hit.units += n;
    else out.push({ partition, units: n });
  };
  add(pk, writeBill(before, after, [], failed).table);
  if (failed) return out;
  for (const index of indexes) for (const w of indexWrites(before, after, index)) add(w.partition, w.units);
  return out;
}
