/**
 * The write side of the read model: applies one change record (PRODUCT P14)
 * to the table. `npm run data:apply` and the ingest Lambda both run it.
 *
 * A change is applied in two steps (docs/data-model.md, "Write side"):
 *
 * 1. The entity's source item is written with a condition on its version
 *    (`attribute_not_exists(pk) OR version < :v`), so a stale or duplicate
 *    change changes nothing, in any order and with any number of appliers.
 *    Deletes write a tombstone that keeps the version. Upserts first check
 *    their references; an RSVP or event also writes the user's link to the
 *    event before its source and checks its references again after it, which
 *    with a deletion's "tombstone, then read links" means that one of the two
 *    always sees the other (so no RSVP or event of a deleted user survives).
 * 2. Every event whose derived items depend on the entity is re-derived with
 *    derive.ts, the full load's own derivation: the derivation takes the next
 *    number of the event's counter, reads the event's sources (one consistent
 *    Query) and users, and writes only the items that differ, each stamped
 *    `gen` with that number and conditional on an older stamp. Hiding writes go
 *    first. A derivation that finds a newer one started leaves the work to it;
 *    one that wrote while a newer one started derives again. The derivation
 *    with the highest number read every source write before it, and no older
 *    one can write after it reads, so the last word is always the newest.
 *
 * Items that may be listed (the event, profile entries) also move their
 * tally entry when their list key changes, and the lists' day, month and year
 * counts are recounted (tally.ts, tally-recount.ts): such an item is written
 * conditional on the exact version read and notes where its entry was, so a
 * crash between the two is finished by the next derivation.
 *
 * The source item keeps `pending` until step 2 is done: a redelivered change
 * (stale by then) finishes the work a crash or a timeout left undone. A user's
 * fan-out across many events saves its progress, so it resumes where it
 * stopped instead of starting over.
 */
import {
  BatchGetCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { Change } from '../core/changes.js';
import { isConditionFailure } from './conditions.js';
import { systemClock, type Clock } from '../core/clock.js';
import type { Outcome } from '../core/fold.js';
import { deriveEventAggregate, eventSourceItem, rsvpRecord, rsvpSourceItem, userEventLink, userItem, userRecord } from './derive.js';
import type { EventSourceItem, RsvpRecord, RsvpSourceItem, TableItem, UserItem, UserRecord } from './items.js';
import { DERIVED_SORT_KEYS, INDEXES, LINK_PREFIX, PK, RSVP_SOURCE_PREFIX, SK, TTL_ATTRIBUTE, keys } from './table.js';
import { sameTallyKey, tallyEntry, tallyKeyOf, type TallyKey } from './tally.js';
import { TallyRecounter } from './tally-recount.js';

export type ApplyResult = Outcome & {
  /** Items written (puts and updates) for this change, fan-out included. */
  writes: number;
  /** Events re-derived. */
  derivations: number;
};

export interface ApplierOptions {
  clock?: Clock;
  /** Item writes in flight at once within one derivation. */
  writeConcurrency?: number;
  /** Events derived at once in a user's fan-out. */
  fanOutConcurrency?: number;
  /**
   * Time left for this invocation (Lambda's getRemainingTimeInMillis). A
   * fan-out stops between chunks when less than `reserveMs` is left and throws
   * FanOutIncomplete; its progress is saved and the redelivery resumes it.
   */
  remainingMs?: () => number;
  reserveMs?: number;
}

/** A fan-out stopped for time; the change's redelivery finishes it. */
export class FanOutIncomplete extends Error {
  constructor(readonly subject: string) {
    super(`fan-out of ${subject} stopped before the time limit; its redelivery resumes it`);
    this.name = 'FanOutIncomplete';
  }
}

/** How long a derived tombstone is kept: far longer than any derivation runs. */
const TOMBSTONE_TTL_SECONDS = 86_400;
const MAX_DERIVATION_ROUNDS = 25;
const BOOKKEEPING = new Set(['gen', TTL_ATTRIBUTE, 'tally_pending', 'tally_from', 'ticket', 'counted']);
const INDEX_ATTRIBUTES = Object.values(INDEXES).flatMap((i) => [i.partitionKey, i.sortKey]);

type Key = Record<string, string>;
type Item = Record<string, unknown>;

export class ChangeApplier {
  private readonly clock: Clock;
  private readonly tallies: TallyRecounter;
  private writes = 0;
  private derivations = 0;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly opts: ApplierOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    this.tallies = new TallyRecounter(client, tableName, () => this.writes++);
  }

  async apply(change: Change): Promise<ApplyResult> {
    this.writes = 0;
    this.derivations = 0;
    const outcome = await this.dispatch(change);
    return { ...outcome, writes: this.writes, derivations: this.derivations };
  }

  private async dispatch(change: Change): Promise<Outcome> {
    const v = change.version;
    switch (change.type) {
      case 'user.upserted': {
        const id = change.user.id;
        const user = userRecord(change.user);
        return this.writeSource(keys.user(id), pendingItem(userItem(user, v)), v, async (previous) => {
          // Only the public part of a user is copied anywhere: a change of e-mail or phone alone fans out to nothing.
          if (previous?.user && !previous.pending && sameContent(previous.user as Item, user as unknown as Item)) return;
          await this.fanOut(id, v, (e) => this.derive(e));
        });
      }
      case 'user.deleted': {
        const id = change.user_id;
        const tomb = { ...keys.user(id), type: 'USER', user_id: id, version: v, deleted: true, pending: true };
        return this.writeSource(keys.user(id), tomb, v, () => this.fanOut(id, v, (e) => this.cascadeUserFrom(e, id)));
      }
      case 'event.upserted': {
        const { event } = change;
        const key = keys.eventSource(event.id);
        const stale = await this.staleAgainst(key, v, () => this.derive(event.id));
        if (stale) return stale;
        if (!(await this.liveUser(event.creator_id))) return { result: 'waiting', missing: `user ${event.creator_id}` };
        await this.put(userEventLink(event.creator_id, event.id));
        return this.writeSource(key, pendingItem(eventSourceItem(event, v)), v, async () => {
          // The creator's deletion may have read its links before this one existed: cascade here then.
          if (!(await this.liveUser(event.creator_id))) await this.cascadeUserFrom(event.id, event.creator_id);
          await this.derive(event.id);
        });
      }
      case 'event.deleted': {
        const id = change.event_id;
        const tomb = { ...keys.eventSource(id), type: 'EVENT_SOURCE', event_id: id, version: v, deleted: true, pending: true };
        return this.writeSource(keys.eventSource(id), tomb, v, async () => {
          await this.tombstoneRsvpsOf(id);
          await this.derive(id);
        });
      }
      case 'rsvp.upserted': {
        const { rsvp } = change;
        if (rsvp.user_id == null) return { result: 'applied' }; // an anonymous guest: accepted, nothing stored
        const record = rsvpRecord({ ...rsvp, user_id: rsvp.user_id });
        const key = keys.rsvpSource(record.event_id, record.user_id);
        const stale = await this.staleAgainst(key, v, () => this.derive(record.event_id));
        if (stale) return stale;
        const missing = await this.missingReference(record);
        if (missing) return { result: 'waiting', missing };
        await this.put(userEventLink(record.user_id, record.event_id));
        return this.writeSource(key, pendingItem(rsvpSourceItem(record, v)), v, async () => {
          // The event's or the user's deletion may have missed this RSVP: remove it here then.
          if (await this.missingReference(record)) await this.tombstoneSource(key);
          await this.derive(record.event_id);
        });
      }
      case 'rsvp.deleted': {
        const tomb = { ...keys.rsvpSource(change.event_id, change.user_id), type: 'RSVP_SOURCE', event_id: change.event_id, user_id: change.user_id, version: v, deleted: true, pending: true };
        return this.writeSource(keys.rsvpSource(change.event_id, change.user_id), tomb, v, () => this.derive(change.event_id));
      }
    }
  }

  // --- step 1: sources ------------------------------------------------------

  /**
   * Writes a source item unless its version is not newer, then does the
   * change's derivations and clears `pending`. A stale change finishes the
   * derivations a pending item still waits for, and changes nothing else.
   */
  private async writeSource(key: Key, item: Item, version: number, derivations: (previous?: Item) => Promise<unknown>): Promise<Outcome> {
    let previous: Item | undefined;
    try {
      const out = await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: 'attribute_not_exists(#pk) OR #version < :v',
          ExpressionAttributeNames: { '#pk': PK, '#version': 'version' },
          ExpressionAttributeValues: { ':v': version },
          ReturnValues: 'ALL_OLD',
        }),
      );
      previous = out.Attributes;
      this.writes++;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return (await this.staleAgainst(key, version, () => derivations())) ?? { result: 'stale', storedVersion: version };
    }
    await derivations(previous);
    await this.clearPending(key, version);
    return { result: 'applied' };
  }

  /** Stale when the stored version is not older; finishes any pending work of the stored change first. */
  private async staleAgainst(key: Key, version: number, derivations: () => Promise<unknown>): Promise<Outcome | null> {
    const stored = (await this.get(key)) as { version?: number; pending?: boolean } | undefined;
    if (stored?.version === undefined || stored.version < version) return null;
    if (stored.pending) {
      await derivations();
      await this.clearPending(key, stored.version);
    }
    return { result: 'stale', storedVersion: stored.version };
  }

  private async clearPending(key: Key, version: number): Promise<void> {
    await this.conditionalUpdate(key, 'REMOVE #pending, pending_after', '#version = :v', { ':v': version }, { '#pending': 'pending' });
  }

  /** Turns a live source item into a tombstone that keeps its version (a cascade). */
  private async tombstoneSource(key: Key): Promise<void> {
    for (;;) {
      const current = (await this.get(key)) as { version: number; deleted?: boolean } | undefined;
      if (!current || current.deleted) return;
      // Conditional on the version read: a newer upsert in between is read again.
      const done = await this.conditionalUpdate(
        key,
        'SET #deleted = :true REMOVE #user, #event, #rsvp',
        '#version = :v AND attribute_not_exists(#deleted)',
        { ':v': current.version, ':true': true },
        { '#user': 'user', '#event': 'event', '#rsvp': 'rsvp', '#deleted': 'deleted' },
      );
      if (done) return;
    }
  }

  private async tombstoneRsvpsOf(eventId: string): Promise<void> {
    const sources = await this.queryAll({ pk: `EVENT#${eventId}`, prefix: RSVP_SOURCE_PREFIX });
    for (const s of sources as unknown as RsvpSourceItem[]) if (!s.deleted) await this.tombstoneSource(keys.rsvpSource(eventId, s.user_id));
  }

  /** One linked event of a deleted user: delete it if the user created it, else the user's RSVP to it. */
  private async cascadeUserFrom(eventId: string, userId: string): Promise<void> {
    const source = (await this.get(keys.eventSource(eventId))) as EventSourceItem | undefined;
    if (source?.event && !source.deleted && source.event.creator_id === userId) await this.tombstoneSource(keys.eventSource(eventId));
    // A deleted event's RSVPs go with it. Read again: a newer upsert may have moved the event to another
    // creator in between, and a redelivery after a crash between the two tombstones finishes here.
    const after = (await this.get(keys.eventSource(eventId))) as EventSourceItem | undefined;
    if (after?.deleted) await this.tombstoneRsvpsOf(eventId);
    await this.tombstoneSource(keys.rsvpSource(eventId, userId));
    await this.derive(eventId);
  }

  private async liveUser(userId: string): Promise<UserRecord | undefined> {
    const item = (await this.get(keys.user(userId))) as UserItem | undefined;
    return item && !item.deleted ? item.user : undefined;
  }

  private async missingReference(rsvp: RsvpRecord): Promise<string | null> {
    const event = (await this.get(keys.eventSource(rsvp.event_id))) as EventSourceItem | undefined;
    if (!event?.event || event.deleted) return `event ${rsvp.event_id}`;
    if (!(await this.liveUser(rsvp.user_id))) return `user ${rsvp.user_id}`;
    return null;
  }

  // --- step 2: derivations --------------------------------------------------

  /**
   * Runs `each` for every event linked to the user, a chunk at a time, saving
   * the last finished event on the user's item so a redelivery resumes there.
   */
  private async fanOut(userId: string, version: number, each: (eventId: string) => Promise<void>): Promise<void> {
    const userKey = keys.user(userId);
    const after = ((await this.get(userKey)) as { pending_after?: string } | undefined)?.pending_after;
    const links = (await this.queryAll({ pk: userKey[PK], prefix: LINK_PREFIX, after: after ? `${LINK_PREFIX}${after}` : undefined })) as {
      event_id: string;
    }[];
    const chunk = Math.max(1, this.opts.fanOutConcurrency ?? 8);
    for (let i = 0; i < links.length; i += chunk) {
      if (i > 0 && this.opts.remainingMs && this.opts.remainingMs() < (this.opts.reserveMs ?? 10_000)) throw new FanOutIncomplete(userId);
      const part = links.slice(i, i + chunk);
      await Promise.all(part.map((l) => each(l.event_id)));
      if (i + chunk < links.length) {
        await this.conditionalUpdate(userKey, 'SET pending_after = :after', '#version = :v', { ':after': part[part.length - 1]!.event_id, ':v': version });
      }
    }
  }

  /** Re-derives one event's items from its sources (see the file comment for why this is safe). */
  private async derive(eventId: string): Promise<void> {
    this.derivations++;
    for (let round = 0; round < MAX_DERIVATION_ROUNDS; round++) {
      const gen = await this.nextGen(eventId);
      const partition = (await this.queryAll({ pk: `EVENT#${eventId}` })) as (Item & { sk: string })[];
      const seq = partition.find((i) => i.sk === 'SEQ') as { seq: number } | undefined;
      // A newer derivation started after this one's source write: it reads everything this one would.
      if (seq && seq.seq > gen) return;

      const existing = new Map(partition.filter((i) => isDerivedKey(i.sk)).map((i) => [i.sk, i]));
      // A derivation that stopped between an item and its tally entry: finish its move first.
      for (const have of existing.values()) {
        if (!have.tally_pending) continue;
        await this.finishTally(have);
        delete have.tally_pending;
      }
      const target = new Map((await this.targetItems(partition)).map((i) => [i.sk, i as unknown as Item]));
      const tombstone = (sk: string): Item => ({ [PK]: `EVENT#${eventId}`, [SK]: sk, type: 'TOMBSTONE' });
      const writes: { item: Item; hiding: boolean }[] = [];
      for (const sk of new Set([...existing.keys(), ...target.keys()])) {
        const have = existing.get(sk);
        const want = target.get(sk) ?? (have && have.type !== 'TOMBSTONE' ? tombstone(sk) : undefined);
        if (!want || (have && sameContent(have, want))) continue;
        writes.push({ item: want, hiding: want.type === 'TOMBSTONE' || INDEX_ATTRIBUTES.some((a) => have?.[a] !== undefined && want[a] !== have[a]) });
      }
      if (writes.length === 0) return;
      // What hides goes first, so no moment shows a copy the change removed.
      await this.writeDerived(writes.filter((w) => w.hiding).map((w) => w.item), gen, existing);
      await this.writeDerived(writes.filter((w) => !w.hiding).map((w) => w.item), gen, existing);
      const after = (await this.get(keys.derivationSeq(eventId))) as { seq: number } | undefined;
      if (after?.seq === gen) return;
      // A newer derivation started while this one wrote; it may have read before these writes landed.
    }
    throw new Error(`derivation of ${eventId} did not settle after ${MAX_DERIVATION_ROUNDS} rounds`);
  }

  private async targetItems(partition: Item[]): Promise<TableItem[]> {
    const source = partition.find((i) => i[SK] === 'SRC') as unknown as EventSourceItem | undefined;
    if (!source?.event || source.deleted) return [];
    const rsvps = (partition.filter((i) => String(i[SK]).startsWith(RSVP_SOURCE_PREFIX)) as unknown as RsvpSourceItem[]).flatMap((r) =>
      r.rsvp && !r.deleted ? [r.rsvp] : [],
    );
    const users = await this.users([source.event.creator_id, ...rsvps.map((r) => r.user_id)]);
    return deriveEventAggregate({ event: source.event, creator: users.get(source.event.creator_id), rsvps, users });
  }

  private async writeDerived(items: Item[], gen: number, existing: ReadonlyMap<string, Item>): Promise<void> {
    const queue = [...items];
    const worker = async () => {
      for (let item = queue.shift(); item; item = queue.shift()) {
        if (isListedKey(String(item[SK]))) await this.writeListed(item, gen, existing.get(String(item[SK])));
        else if (await this.putDerived(this.stamp(item, gen), OLDER_OR_ABSENT, { ':gen': gen })) this.writes++;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.opts.writeConcurrency ?? 16) }, worker));
  }

  /**
   * An item that may be in a list (the event, a profile entry) also moves its
   * tally entry when its list key changes. To know exactly which entry the
   * table had, the write is conditional on the very version read (its stamp),
   * and re-reads on a conflict; the version written records where the entry
   * was (`tally_from`) with `tally_pending`, so a crash between the item and its
   * entry leaves a note the next derivation finishes (finishTally).
   */
  private async writeListed(want: Item, gen: number, have: Item | undefined): Promise<void> {
    let current = have;
    for (;;) {
      if (typeof current?.gen === 'number' && current.gen >= gen) return; // a newer derivation's word stands
      if (current?.tally_pending) await this.finishTally(current);
      const from = tallyKeyOf(current);
      const moves = !sameTallyKey(from, tallyKeyOf(want));
      const item: Item = { ...this.stamp(want, gen), ...(moves ? { tally_pending: true, ...(from ? { tally_from: from } : {}) } : {}) };
      // A tombstone expires a day after its write; one holding an unfinished note must stay until the note is finished.
      if (moves) delete item[TTL_ATTRIBUTE];
      const written =
        current === undefined
          ? await this.putDerived(item, 'attribute_not_exists(#pk)', {})
          : typeof current.gen === 'number'
            ? await this.putDerived(item, 'gen = :was', { ':was': current.gen })
            : await this.putDerived(item, 'attribute_exists(#pk) AND attribute_not_exists(gen)', {});
      if (written) {
        this.writes++;
        if (moves) await this.finishTally(item);
        return;
      }
      current = await this.get({ [PK]: String(want[PK]), [SK]: String(want[SK]) });
    }
  }

  /**
   * Finishes the tally move of one version of a listed item: the entry where
   * it was becomes a tombstone and the entry where it is now is written (both
   * stamped with the version's `gen`, so an older move cannot undo a newer
   * one), the summaries of both are recounted, and the note is cleared.
   * Idempotent: any number of derivations may finish the same move.
   */
  private async finishTally(version: Item): Promise<void> {
    const gen = Number(version.gen);
    const from = version.tally_from as TallyKey | undefined;
    const to = tallyKeyOf(version);
    if (from && !sameTallyKey(from, to)) {
      if (await this.putDerived(this.stamp({ [PK]: from.pk, [SK]: from.sk, type: 'TOMBSTONE' }, gen), OLDER_OR_ABSENT, { ':gen': gen })) this.writes++;
    }
    if (to && (await this.putDerived({ ...(tallyEntry(to, String(version.event_id)) as unknown as Item), gen }, OLDER_OR_ABSENT, { ':gen': gen }))) this.writes++;
    await this.tallies.recount([from, to].filter((k): k is TallyKey => !!k));
    // Conditional on this version: a newer one that replaced it keeps its own note.
    const key = { [PK]: String(version[PK]), [SK]: String(version[SK]) };
    if (version.type === 'TOMBSTONE') {
      const expires = this.stamp(version, gen)[TTL_ATTRIBUTE];
      await this.conditionalUpdate(key, 'REMOVE tally_pending, tally_from SET #ttl = :expires', 'gen = :gen', { ':gen': gen, ':expires': expires }, { '#ttl': TTL_ATTRIBUTE });
    } else {
      await this.conditionalUpdate(key, 'REMOVE tally_pending, tally_from', 'gen = :gen', { ':gen': gen });
    }
  }

  private stamp(item: Item, gen: number): Item {
    const expiresAt = Math.floor(this.clock().getTime() / 1000) + TOMBSTONE_TTL_SECONDS;
    return { ...item, gen, ...(item.type === 'TOMBSTONE' ? { [TTL_ATTRIBUTE]: expiresAt } : {}) };
  }

  /** A conditional Put; false when the condition fails (another derivation's word stands or must be read). */
  private async putDerived(item: Item, condition: string, values: Record<string, unknown>): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: condition,
          ...attributeNames(condition, { '#pk': PK }),
          ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return false;
    }
  }

  private async nextGen(eventId: string): Promise<number> {
    const out = await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: keys.derivationSeq(eventId),
        UpdateExpression: 'ADD seq :one SET #type = :type',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':one': 1, ':type': 'DERIVATION_SEQ' },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    this.writes++;
    return Number(out.Attributes?.seq);
  }

  /** Live users by id, read consistently. */
  private async users(ids: string[]): Promise<Map<string, UserRecord>> {
    const found = new Map<string, UserRecord>();
    const unique = [...new Set(ids)];
    for (let i = 0; i < unique.length; i += 100) {
      let request: Record<string, unknown>[] | undefined = unique.slice(i, i + 100).map((id) => keys.user(id));
      while (request && request.length) {
        const out = await this.client.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: request, ConsistentRead: true } } }));
        for (const item of (out.Responses?.[this.tableName] ?? []) as UserItem[]) if (item.user && !item.deleted) found.set(item.user_id, item.user);
        request = out.UnprocessedKeys?.[this.tableName]?.Keys as Record<string, unknown>[] | undefined;
      }
    }
    return found;
  }

  // --- DynamoDB helpers -----------------------------------------------------

  private async get(key: Key): Promise<Item | undefined> {
    return (await this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }))).Item;
  }

  private async put(item: TableItem): Promise<void> {
    await this.client.send(new PutCommand({ TableName: this.tableName, Item: item }));
    this.writes++;
  }

  private async conditionalUpdate(key: Key, update: string, condition: string, values: Record<string, unknown>, names: Record<string, string> = {}): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: update,
          ConditionExpression: condition,
          ...attributeNames(`${update} ${condition}`, { '#version': 'version', ...names }),
          ExpressionAttributeValues: values,
        }),
      );
      this.writes++;
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** A partition (or the part of it after a prefix), consistently, every page. */
  private async queryAll(q: { pk: string; prefix?: string; after?: string }): Promise<Item[]> {
    const names: Record<string, string> = { '#pk': PK };
    const values: Record<string, unknown> = { ':pk': q.pk };
    let condition = '#pk = :pk';
    if (q.after !== undefined) {
      condition += ' AND #sk > :after';
      names['#sk'] = SK;
      values[':after'] = q.after;
    } else if (q.prefix !== undefined) {
      condition += ' AND begins_with(#sk, :prefix)';
      names['#sk'] = SK;
      values[':prefix'] = q.prefix;
    }
    const input: QueryCommandInput = { TableName: this.tableName, KeyConditionExpression: condition, ExpressionAttributeNames: names, ExpressionAttributeValues: values, ConsistentRead: true };
    const items: Item[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.client.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
      items.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
    } while (start);
    return q.after !== undefined && q.prefix !== undefined ? items.filter((i) => String(i[SK]).startsWith(q.prefix!)) : items;
  }
}

/** A derived item or tally entry's write: only over nothing, an unstamped load, or an older derivation's. */
const OLDER_OR_ABSENT = 'attribute_not_exists(#pk) OR attribute_not_exists(gen) OR gen < :gen';

/** The names an expression uses, or nothing: DynamoDB refuses unused names and an empty map. */
function attributeNames(expression: string, names: Record<string, string>): { ExpressionAttributeNames?: Record<string, string> } {
  const used = Object.entries(names).filter(([name]) => expression.includes(name));
  return used.length ? { ExpressionAttributeNames: Object.fromEntries(used) } : {};
}

/** A source item that still has derivations to run (cleared when they are done). */
function pendingItem(item: TableItem): Item {
  return { ...(item as unknown as Item), pending: true };
}

/** Derived items that may be listed in user-events-index, and so carry a tally entry. */
function isListedKey(sk: string): boolean {
  return sk === DERIVED_SORT_KEYS.event || sk.startsWith(DERIVED_SORT_KEYS.profilePrefix);
}

function isDerivedKey(sk: string): boolean {
  return sk === DERIVED_SORT_KEYS.event || sk.startsWith(DERIVED_SORT_KEYS.rsvpPrefix) || sk.startsWith(DERIVED_SORT_KEYS.profilePrefix);
}

/** Equal apart from bookkeeping (derivation stamps, tombstone expiry). */
export function sameContent(a: Item, b: Item): boolean {
  return stableJson(withoutBookkeeping(a)) === stableJson(withoutBookkeeping(b));
}

function withoutBookkeeping(item: Item): Item {
  return Object.fromEntries(Object.entries(item).filter(([k]) => !BOOKKEEPING.has(k)));
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Item)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
