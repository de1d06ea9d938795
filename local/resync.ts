/**
 * Resync (`npm run data:load -- FILE --replace [--dry-run]`): makes the table
 * hold exactly FILE's read model. It reads the whole table once (an operator's
 * tool, never on a request path), derives FILE's items with the full load's own
 * derivation, and writes what is new or changed and removes what FILE no
 * longer derives (PRODUCT P14).
 *
 * - Keys made by the key manager, the local quota's counters and derivation
 *   counters are left alone; FILE's `api_keys` are added only where missing,
 *   and each active one holds a slot of its user (the key counter is raised
 *   for it, as a load would have written it). The keys of a user FILE no
 *   longer has are closed as a `user.deleted` closes them (lambdas/store/
 *   user-keys.ts): 401 from then on, nothing kept but their ids, plan keys
 *   deleted; a user FILE brings back may make keys again. These steps come
 *   after the writes and are derived from the table each run, so a run that
 *   dies before them is finished by the next.
 * - Versions are bookkeeping, not read model: an entity FILE still has keeps
 *   the version the table knew (so an older change arriving later stays
 *   stale), and one FILE no longer has becomes a tombstone that keeps its
 *   version (so an older change cannot bring it back).
 * - So is an event's calendar history (SEQUENCE, LAST-MODIFIED:
 *   lambdas/core/calendar-revision.ts), counted as the change path counts it:
 *   kept while FILE's event reads the same in a calendar as the table's, one
 *   more, stamped with the run's clock, when it reads otherwise (or comes back
 *   after a deletion); a removed event's tombstone keeps it.
 * - The changes feeds hear of it like of any change: every event or RSVP
 *   item it writes or removes is appended to each scope that the version
 *   replaced or the version written shows it in (the change path's own rule,
 *   scopesToAppend), so a consumer following a feed across a replace still
 *   converges. Crash-safe the change path's way: each such item is written
 *   with its feed note (a removed one as a tombstone holding it), the entries
 *   are appended after every write, then the notes are cleared (the
 *   tombstones deleted); a run that dies in between leaves notes that the
 *   next run finishes.
 * - The feeds' member lists (what a start from no cursor reads) are made to
 *   match FILE's read model exactly: every shown member joined (before the
 *   entries are appended), every other one removed.
 * - Run it with the ingest paused (docs/data-model.md): it does not take part
 *   in the derivations' ordering.
 */
import { DeleteCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { calendarRevision, revisionOf, type RevisionSource } from '../lambdas/core/calendar-revision.js';
import { systemClock, type Clock } from '../lambdas/core/clock.js';
import type { Dataset } from '../lambdas/core/dataset.js';
import type { CalendarRevision } from '../lambdas/core/read-items.js';
import { BULK_APPEND, FEED_MEMBER_PREFIX, FEED_MEMBERS_PARTITION_PREFIX, FEED_NOTE, FEED_PARTITION_PREFIX, FeedWriter, feedMemberOf, groupByShard, memberKey, scopesShowing, scopesToAppend } from '../lambdas/store/feeds/feed.js';
import { TableIO } from '../lambdas/store/table/table-io.js';
import { sameContent } from '../lambdas/store/table/item-content.js';
import { batchWriteAll, type BatchWriteOptions } from '../lambdas/store/table/batch-write.js';
import { INDEXES, PK, SK, guestShardOfPartition, keys } from '../lambdas/store/table/table.js';
import { apiKeyItems, readModelItems } from '../lambdas/store/changes/writer.js';
import { appendByScope } from './loader.js';
import { markedShards, shardRecordOf } from '../lambdas/store/changes/shard-record.js';
import { KeyStore, type PlanKeys, type RevokeAudit } from '../lambdas/store/keys/key-store.js';
import type { WebhookAudit } from '../lambdas/store/webhooks/key-webhooks.js';
import { closeUserKeys } from '../lambdas/store/keys/user-keys.js';

const KEY_PARTITION = 'USERKEYS#';

type Item = Record<string, unknown>;

/** Partitions that are not the read model of users, events and RSVPs. */
const UNTOUCHED_PARTITIONS = /^(APIKEY|USERKEYS|KEYID|KEYREQ|KEYSWEEP|QUOTA|FEED)#/;
// A guest shard record is never removed (its marks only grow): planShardRecords writes it.
// A guest count ticket, and a tally summary's, only grows: a removed one would start again below its summary's
// `counted` (guest-counts.ts, tally-recount.ts).
const UNTOUCHED_TYPES = new Set(['DERIVATION_SEQ', 'TOMBSTONE', 'GUEST_SHARDS', 'GUEST_COUNT_TICKET', 'TALLY_TICKET']);
const GUEST_SHARDS_TYPE = 'GUEST_SHARDS';
const EVENT_PREFIX = 'EVENT#';
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
  /** Items whose feed note is appended, then cleared, after the writes (`drop`: a tombstone of this run, deleted then). */
  feeds: FeedNote[];
  /** The users' keys, after the writes: closed for users FILE does not have, reopened for users it brings back, slots for seeded keys. */
  keys: { close: { userId: string; version: number }[]; reopen: string[]; adopt: { userId: string; keyIds: string[] }[] };
  /** Feed members to write (shown in FILE's read model, not listed) and to delete (listed, not shown). */
  members: { join: Item[]; drop: Item[] };
}

interface FeedNote {
  key: Item;
  member: string;
  scopes: string[];
  /** The version's derivation stamp (none on what a load or a resync wrote): the note is cleared only on it. */
  gen?: number;
  drop: boolean;
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

/** What a table holds besides keys and quotas: a plain load refuses a table with any of it. */
export interface TableHistory {
  /** Live users and events. */
  entities: number;
  /** Deleted users, events and RSVPs (their tombstones keep their versions), and derived tombstones. */
  tombstones: number;
  /** Changes feeds (scopes) with a history: their positions must never be numbered again. */
  feeds: number;
}

/**
 * Counts what a plain load must not write over (one Scan of the table, an
 * operator's tool): a table that held entities and now holds only their
 * tombstones still has versions a late change is compared with, and feeds
 * whose consumers hold cursors past their positions.
 */
export async function tableHistory(client: DynamoDBDocumentClient, tableName: string): Promise<TableHistory> {
  const history: TableHistory = { entities: 0, tombstones: 0, feeds: 0 };
  const feeds = new Set<string>();
  let start: Record<string, unknown> | undefined;
  do {
    const out = await client.send(
      new ScanCommand({
        TableName: tableName,
        ExclusiveStartKey: start,
        FilterExpression: '#type IN (:user, :event, :rsvp, :tomb) OR begins_with(#pk, :feed)',
        ExpressionAttributeNames: { '#type': 'type', '#pk': PK, '#deleted': 'deleted' },
        ExpressionAttributeValues: { ':user': 'USER', ':event': 'EVENT_SOURCE', ':rsvp': 'RSVP_SOURCE', ':tomb': 'TOMBSTONE', ':feed': FEED_PARTITION_PREFIX },
        ProjectionExpression: '#pk, #type, #deleted',
      }),
    );
    for (const item of out.Items ?? []) {
      if (String(item[PK]).startsWith(FEED_PARTITION_PREFIX)) feeds.add(String(item[PK]));
      else if (item.type === 'TOMBSTONE' || item.deleted) history.tombstones++;
      else if (item.type !== 'RSVP_SOURCE') history.entities++;
    }
    start = out.LastEvaluatedKey;
  } while (start);
  history.feeds = feeds.size;
  return history;
}

/** The history's counts in words, or null when a plain load may write (nothing there). */
export function describeHistory(h: TableHistory): string | null {
  if (!h.entities && !h.tombstones && !h.feeds) return null;
  return `${h.entities} users or events, ${h.tombstones} tombstones, ${h.feeds} changes feeds`;
}

/** `now` stamps the calendar revisions this run counts (FILE's events that read otherwise than the table's). */
export function planResync(current: readonly Item[], dataset: Dataset, now: Date = systemClock()): ResyncPlan {
  const plan: ResyncPlan = { added: zero(), changed: zero(), removed: zero(), puts: [], deletes: [], feeds: [], keys: { close: [], reopen: [], adopt: [] }, members: { join: [], drop: [] } };
  const have = new Map(current.map((i) => [keyOf(i), i]));
  const target = new Map<string, Item>();
  const model = readModelItems(dataset, calendarRevisions(have, dataset, now)).items as unknown as Item[];
  for (const item of model) {
    if (item.type === GUEST_SHARDS_TYPE) continue; // planShardRecords
    const old = have.get(keyOf(item));
    // A derivation counter the table has keeps its number: derived items carry numbers it handed out.
    if (old && UNTOUCHED_TYPES.has(String(item.type))) {
      target.set(keyOf(old), old);
      continue;
    }
    const kind = SOURCE_TYPES[String(item.type)];
    // A source keeps the version the table knew for it (tombstone or not).
    let next: Item = kind && typeof old?.version === 'number' ? { ...item, version: Math.max(old.version, 0) } : item;
    target.set(keyOf(next), next);
    const oldLive = old !== undefined && !old.deleted && old.type !== 'TOMBSTONE';
    if (oldLive && sameContent(withoutPending(old), next)) {
      // Unchanged, but a note an earlier run left unfinished is finished now (a change's note is its pending source's).
      if (ownNote(old)) plan.feeds.push({ key: keyOnly(old), member: feedMemberOf(old), scopes: noteOf(old), gen: genOf(old), drop: false });
      continue;
    }
    const scopes = union(old ? scopesToAppend(old, next) : scopesShowing(next), noteOf(old));
    if (scopes.length) {
      next = { ...next, [FEED_NOTE]: scopes };
      plan.feeds.push({ key: keyOnly(next), member: feedMemberOf(next), scopes, drop: false });
    }
    plan.puts.push(next);
    if (kind) plan[oldLive ? 'changed' : 'added'][kind]++;
  }
  planShardRecords(plan, current, model.filter((i) => i.type === GUEST_SHARDS_TYPE), have, target);
  // A seeded key's slot is taken through its user's counter (after the writes), not by writing the counter whole.
  for (const item of apiKeyItems(dataset) as unknown as Item[]) if (item.type !== 'KEY_COUNTER' && !have.has(keyOf(item))) plan.puts.push(item);
  plan.keys = planKeys(current, dataset, have);

  for (const item of current) {
    if (target.has(keyOf(item)) || UNTOUCHED_PARTITIONS.test(String(item[PK]))) continue;
    // A tombstone still holding an earlier run's note (it died before the entries): finished like the others.
    if (item.type === 'TOMBSTONE' && ownNote(item)) plan.feeds.push({ key: keyOnly(item), member: feedMemberOf(item), scopes: noteOf(item), gen: genOf(item), drop: false });
    if (UNTOUCHED_TYPES.has(String(item.type))) continue;
    const kind = SOURCE_TYPES[String(item.type)];
    if (kind) {
      if (item.deleted) continue; // a tombstone stays, with its version
      plan.removed[kind]++;
      plan.puts.push(tombstoneOf(item));
    } else {
      const scopes = union(scopesShowing(item), noteOf(item));
      if (scopes.length) {
        // A member a feed showed: removed through a tombstone holding the note, deleted once the entries are in.
        plan.puts.push({ ...keyOnly(item), type: 'TOMBSTONE', [FEED_NOTE]: scopes });
        plan.feeds.push({ key: keyOnly(item), member: feedMemberOf(item), scopes, drop: true });
      } else {
        plan.deletes.push(keyOnly(item));
      }
    }
  }
  planMembers(plan, current, [...target.values()]);
  return plan;
}

/** Each of FILE's events' calendar history against the table's source item for it, as the change path counts it. */
function calendarRevisions(have: ReadonlyMap<string, Item>, dataset: Dataset, now: Date): Map<string, CalendarRevision> {
  const revisions = new Map<string, CalendarRevision>();
  for (const event of dataset.events) {
    const revision = calendarRevision(have.get(keyOf(keys.eventSource(event.id))) as RevisionSource | undefined, event, now);
    if (revision) revisions.set(event.id, revision);
  }
  return revisions;
}

/**
 * The events' guest shard records (lambdas/store/changes/shard-record.ts): every shard that FILE's items or the
 * table's items of an event are in stays or becomes marked, and no mark is removed (a shard FILE leaves empty may
 * still hold what the resync keeps there: derivation counters, tombstones). Written first (executeResync), so no
 * item lands in a shard its record does not mark, even in a run that dies part-way. A table written before the
 * records existed gets them here, from what it holds.
 */
function planShardRecords(plan: ResyncPlan, current: readonly Item[], fromFile: readonly Item[], have: ReadonlyMap<string, Item>, target: Map<string, Item>): void {
  const marks = new Map<string, Set<number>>();
  const add = (eventId: string, shards: Iterable<number>) => {
    const set = marks.get(eventId) ?? new Set<number>();
    for (const shard of shards) set.add(shard);
    marks.set(eventId, set);
  };
  for (const item of [...current, ...fromFile]) {
    const pk = String(item[PK]);
    if (item.type === GUEST_SHARDS_TYPE) add(pk.slice(EVENT_PREFIX.length), markedShards(item));
    const at = guestShardOfPartition(pk);
    if (at) add(at.eventId, [at.shard]);
  }
  for (const [eventId, shards] of marks) {
    const record = (shardRecordOf(eventId, shards) as unknown as Item[])[0]!;
    const old = have.get(keyOf(record));
    target.set(keyOf(record), record);
    // The table's marks are among `shards`: as many means the same.
    if (!old || markedShards(old).length !== shards.size) plan.puts.push(record);
  }
}

/** The feeds' member lists after the resync: exactly the members FILE's read model shows in each scope. */
function planMembers(plan: ResyncPlan, current: readonly Item[], target: readonly Item[]): void {
  const listed = new Set(current.filter((i) => String(i[SK]).startsWith(FEED_MEMBER_PREFIX) && String(i[PK]).startsWith(FEED_MEMBERS_PARTITION_PREFIX)).map(keyOf));
  const shown = new Map<string, Item>();
  for (const item of target) for (const scope of scopesShowing(item)) shown.set(keyOf(memberKey(scope, feedMemberOf(item))), { ...memberKey(scope, feedMemberOf(item)), type: 'FEED_MEMBER', gen: 0 });
  for (const [key, member] of shown) if (!listed.has(key)) plan.members.join.push(member);
  for (const item of current) if (listed.has(keyOf(item)) && !shown.has(keyOf(item))) plan.members.drop.push(keyOnly(item));
}

export async function executeResync(client: DynamoDBDocumentClient, tableName: string, plan: ResyncPlan, opts?: BatchWriteOptions & { clock?: Clock; planKeys?: PlanKeys; audit?: RevokeAudit; webhookAudit?: WebhookAudit }): Promise<void> {
  // The guest shard records before anything is written in those shards (planShardRecords).
  const [records, puts] = partition(plan.puts, (i) => i.type === GUEST_SHARDS_TYPE);
  await batchWriteAll(client, tableName, records, opts);
  // Removals first: nothing FILE hides is visible while the rest is written.
  await batchWriteAll(client, tableName, [], opts, plan.deletes);
  // Tombstones (removals a feed showed) before the rest, for the same reason.
  const [tombstones, rest] = partition(puts, (i) => i.type === 'TOMBSTONE');
  await batchWriteAll(client, tableName, tombstones, opts);
  await batchWriteAll(client, tableName, rest, opts);
  // Members before their entries (a start from no cursor that read the position before them lists them or meets the entry).
  await batchWriteAll(client, tableName, plan.members.join, opts, plan.members.drop);
  await finishFeeds(client, tableName, plan.feeds, opts?.clock ?? systemClock);
  const store = new KeyStore(client, tableName, { clock: opts?.clock ?? systemClock, planKeys: opts?.planKeys, audit: opts?.audit, webhookAudit: opts?.webhookAudit });
  // Each close is bounded per call (user-keys.ts); an operator's run goes on until it is done.
  for (const { userId, version } of plan.keys.close) while (!(await closeUserKeys(store, userId, version)).done);
  for (const userId of plan.keys.reopen) await store.reopenSlots(userId);
  for (const { userId, keyIds } of plan.keys.adopt) await store.adoptSlots(userId, keyIds);
}

/**
 * The key steps of a resync, from the table as read and FILE: users with key
 * items whose user FILE does not have (closed at the version their tombstone
 * keeps), users FILE has whose slots a deletion closed, and the slots FILE's
 * active seeded keys hold (a key revoked in the table since stays revoked).
 */
function planKeys(current: readonly Item[], dataset: Dataset, have: ReadonlyMap<string, Item>): ResyncPlan['keys'] {
  const live = new Set(dataset.users.map((u) => u.id));
  const versions = new Map(current.filter((i) => i.type === 'USER').map((i) => [String(i.user_id), typeof i.version === 'number' ? i.version : 0]));
  const withKeys = new Map<string, Item[]>();
  for (const item of current) {
    const pk = String(item[PK]);
    if (!pk.startsWith(KEY_PARTITION)) continue;
    const userId = pk.slice(KEY_PARTITION.length);
    withKeys.set(userId, [...(withKeys.get(userId) ?? []), item]);
  }
  const close: ResyncPlan['keys']['close'] = [];
  const reopen: string[] = [];
  for (const [userId, items] of withKeys) {
    const counter = items.find((i) => i.type === 'KEY_COUNTER');
    if (!live.has(userId)) {
      // Done already when the slots are closed and every record erased.
      const finished = counter?.closed_version !== undefined && Object.keys((counter.holders as object | undefined) ?? {}).length === 0 && items.every((i) => i.type !== 'KEY_RECORD' || i.erased);
      if (!finished) close.push({ userId, version: versions.get(userId) ?? 0 });
    } else if (counter?.closed_version !== undefined) {
      reopen.push(userId);
    }
  }
  const adopt = new Map<string, string[]>();
  for (const item of apiKeyItems(dataset) as unknown as Item[]) {
    if (item.type !== 'KEY_RECORD' || item.revoked) continue;
    const stored = have.get(keyOf(item));
    if (stored && (stored.revoked || stored.erased)) continue;
    const userId = String(item.user_id);
    adopt.set(userId, [...(adopt.get(userId) ?? []), String(item.key_id)]);
  }
  return { close, reopen, adopt: [...adopt].map(([userId, keyIds]) => ({ userId, keyIds })) };
}

/**
 * The feed entries of the notes written (after every item is written, as a
 * derivation does): each head shard's members in order, shards a few at
 * once (appends to one head would only contend), then each note cleared.
 */
async function finishFeeds(client: DynamoDBDocumentClient, tableName: string, notes: readonly FeedNote[], clock: Clock): Promise<void> {
  if (!notes.length) return;
  const io = new TableIO(client, tableName);
  const writer = new FeedWriter(io, clock);
  const byScope = new Map<string, string[]>();
  for (const n of notes) for (const scope of n.scopes) byScope.set(scope, [...(byScope.get(scope) ?? []), n.member]);
  // One appender a scope, 8 scopes at once: the loader's rule (loader.ts appendByScope).
  await appendByScope(writer, byScope, 8);
  for (const n of notes) {
    // Only the version this run saw: one a change wrote since owes its own note.
    const condition = n.gen === undefined ? 'attribute_exists(#pk) AND attribute_not_exists(gen)' : 'gen = :gen';
    const values = n.gen === undefined ? {} : { ':gen': n.gen };
    if (n.drop) {
      await client
        .send(new DeleteCommand({ TableName: tableName, Key: n.key, ConditionExpression: `${condition} AND #type = :tomb`, ExpressionAttributeNames: { '#pk': PK, '#type': 'type' }, ExpressionAttributeValues: { ...values, ':tomb': 'TOMBSTONE' } }))
        .catch((error: { name?: string }) => {
          if (error.name !== 'ConditionalCheckFailedException') throw error;
        });
    } else {
      await io.updateIf(n.key as Record<string, string>, 'REMOVE #note', condition, values, { '#note': FEED_NOTE });
    }
  }
}

export function formatPlan(plan: ResyncPlan): string {
  const line = (c: Counts) => `${c.users} users, ${c.events} events, ${c.rsvps} rsvps`;
  // A removal a feed showed is written as a tombstone first, then deleted: counted as deleted.
  const drops = plan.feeds.filter((n) => n.drop).length;
  const entries = plan.feeds.reduce((n, f) => n + f.scopes.length, 0);
  return [
    `added: ${line(plan.added)}`,
    `changed: ${line(plan.changed)}`,
    `removed: ${line(plan.removed)}`,
    `items written: ${plan.puts.length - drops}, items deleted: ${plan.deletes.length + drops}, changes feed entries: ${entries}`,
    `keys: closed for ${plan.keys.close.length} removed user(s), reopened for ${plan.keys.reopen.length}, slots checked for ${plan.keys.adopt.length} user(s) with seeded keys`,
  ].join('\n');
}

const keyOnly = (item: Item): Item => ({ [PK]: item[PK], [SK]: item[SK] });
const genOf = (item: Item): number | undefined => (typeof item.gen === 'number' ? item.gen : undefined);
const noteOf = (item: Item | undefined): string[] => (Array.isArray(item?.[FEED_NOTE]) ? (item[FEED_NOTE] as string[]) : []);
/**
 * A note only a resync writes unstamped. A derivation's note (stamped) stays
 * on its item as the record of its appends, owed only while the source item
 * that derived it is pending: that source's next settle finishes it
 * (derivation.ts). An item this run rewrites carries either kind on.
 */
const ownNote = (item: Item): boolean => noteOf(item).length > 0 && genOf(item) === undefined;
const union = (a: readonly string[], b: readonly string[]): string[] => [...new Set([...a, ...b])];

function partition<T>(all: readonly T[], test: (t: T) => boolean): [T[], T[]] {
  return [all.filter(test), all.filter((t) => !test(t))];
}

function withoutPending(item: Item): Item {
  const { pending: _pending, pending_after: _after, ...rest } = item;
  return rest;
}

function tombstoneOf(item: Item): Item {
  const keep = [PK, SK, 'type', 'user_id', 'event_id', 'version'];
  const tomb = Object.fromEntries(Object.entries(item).filter(([k]) => keep.includes(k) && !INDEX_ATTRIBUTES.includes(k)));
  // An event's tombstone keeps its calendar history, as the change path's do.
  const revision = item.type === 'EVENT_SOURCE' ? revisionOf(item as RevisionSource) : undefined;
  return { ...tomb, ...(revision ? { revision } : {}), deleted: true };
}
