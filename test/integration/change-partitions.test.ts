/**
 * The change path against DynamoDB's partition limit (issue 59, item 6;
 * docs/data-model.md, "Partitions under the change path"), on the real store
 * (dynalite and DynamoDB Local: a change-path file):
 *
 * - what each INCLUDE index copies (event-index, EVENT_INDEX_ATTRIBUTES;
 *   the two list indexes, USER_LIST_ATTRIBUTES) is every attribute its
 *   reads use: after a load and a stream of every kind of change, an item
 *   in the index carries nothing but what it copies, its keys, what the
 *   reads take from its keys and the write side's named bookkeeping, and
 *   the index's entry is exactly what it copies;
 * - the reads answer the same from a table whose indexes copy ALL, as a
 *   stack deployed before keeps them (indexProjection: an index's
 *   projection cannot change in place);
 * - the streams of scripts/bench-partitions.ts (each of one kind meeting one
 *   place or one event, ten at once as an ingest batch applies them), small,
 *   keep their hottest partition within the margin at the ingest's pace:
 *   MARGIN_WCU / INGEST_PACE write units a change, every one of them.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Change } from '../../lambdas/core/changes.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { findUserIdsByName } from '../../lambdas/store/table/user-lookup.js';
import { EVENT_INDEX_ATTRIBUTES, INDEXES, PK, SK, createTableInput } from '../../lambdas/store/table/table.js';
import { ensureTable } from '../../local/dynalite.js';
import { writeDataset } from '../../local/loader.js';
import { scanTable } from '../../local/resync.js';
import { INGEST_PACE, MARGIN_WCU, streamLoads, streams } from '../../scripts/bench-partitions.js';
import { fold } from '../../lambdas/core/fold.js';
import { clock, host, party } from '../support/party.js';
import { freshLoadReadModel, readModel } from '../support/read-model.js';
import { startTestStore, type TestStore } from '../support/store.js';

let store: TestStore;
beforeAll(async () => {
  store = await startTestStore();
});
afterAll(async () => store?.close());

type Item = Record<string, unknown>;
/** The write side's own attributes on an item the index lists: versions, pending work, derivation stamps, marks, notes. */
const WRITE_SIDE = new Set(['version', 'pending', 'pending_after', 'gen', 'revealing', 'tally_pending', 'tally_from', 'feed_note', 'expires_at']);
/**
 * What the reads on the index take from elsewhere: an entry's kind from its sort key (repository.ts puts `type`
 * back), a user's id from its table key (user-lookup.ts); a user's public record is read by id, never from here.
 */
const FROM_KEYS = new Set(['type', 'user_id', 'user']);
const INDEX_KEYS = new Set<string>(Object.values(INDEXES).flatMap((i) => [i.partitionKey, i.sortKey]));
const keyOf = (i: Item) => `${String(i[PK])}\u0000${String(i[SK])}`;

/** A load and a stream of every kind of change on one event, its guests and its host. */
const guests = Array.from({ length: 6 }, (_, i) => ({ id: `usr_g${i}`, username: `guest${i}`, name: `Guest ${i}`, image: null, verification_status: i % 2 ? ('verified' as const) : null }));
const d0: Dataset = {
  users: [{ ...host, name: 'Host', image: 'https://img.example/h.png', verification_status: 'id_verified' }, ...guests],
  events: [{ ...party, description: 'Bring a friend', location: { name: 'Hall', city: 'Lisbon', country: 'PT' }, cost: 10 }],
  rsvps: guests.slice(0, 3).map((u, i) => ({ event_id: party.id, user_id: u.id, status: (['yes', 'maybe', 'no'] as const)[i]!, rsvp_date: '2026-11-02T00:00:00.000Z' })),
};
const changes: Change[] = [
  { type: 'rsvp.upserted', version: 1, rsvp: { event_id: party.id, user_id: 'usr_g3', status: 'yes', rsvp_date: '2026-11-03T00:00:00.000Z' } },
  { type: 'rsvp.upserted', version: 2, rsvp: { event_id: party.id, user_id: 'usr_g0', status: 'no', rsvp_date: '2026-11-02T00:00:00.000Z' } },
  { type: 'rsvp.deleted', version: 2, event_id: party.id, user_id: 'usr_g1' },
  { type: 'user.upserted', version: 2, user: { ...guests[2]!, username: 'renamed2', name: 'Renamed' } },
  { type: 'event.upserted', version: 2, event: { ...d0.events[0]!, title: 'Party, moved', start_date: '2027-01-02T20:00:00.000Z' } },
  { type: 'event.upserted', version: 3, event: { ...d0.events[0]!, visibility: 'private' } },
  { type: 'event.upserted', version: 4, event: { ...d0.events[0]!, title: 'Party, back' } },
  { type: 'rsvp.upserted', version: 1, rsvp: { event_id: party.id, user_id: 'usr_g4', status: 'maybe', rsvp_date: '2026-11-04T00:00:00.000Z' } },
];

/** The indexes that copy only what their reads use. */
const INCLUDED = Object.values(INDEXES).filter((i) => i.projection === 'INCLUDE');
/** What an index copies: the table's keys, its own, and its list. */
const copiedBy = (index: (typeof INCLUDED)[number]) => new Set<string>([PK, SK, index.partitionKey, index.sortKey, ...(index.nonKeyAttributes ?? [])]);

describe('the INCLUDE indexes copy every attribute their reads use', () => {
  it('after a load and each kind of change: nothing on an indexed item but what the index copies, its keys and named bookkeeping; the entry is the item without it', async () => {
    const table = 'include-copies';
    await ensureTable(store.client, table);
    await writeDataset(store.client, table, d0, { clock });
    const applier = new ChangeApplier(store.client, table, { clock });
    const seen = new Map<string, Set<string>>(INCLUDED.map((i) => [i.name, new Set()]));
    for (const change of [null, ...changes]) {
      if (change) await applier.apply(change);
      const all = await scanTable(store.client, table);
      for (const index of INCLUDED) {
        const copied = copiedBy(index);
        const items = all.filter((i) => i[index.partitionKey] !== undefined);
        const entries = new Map((await scanTable(store.client, table, index.name)).map((e) => [keyOf(e), e]));
        for (const item of items) {
          seen.get(index.name)!.add(String(item.type));
          const stray = Object.keys(item).filter((a) => !copied.has(a) && !WRITE_SIDE.has(a) && !INDEX_KEYS.has(a) && !FROM_KEYS.has(a));
          expect({ index: index.name, item: keyOf(item), stray }).toEqual({ index: index.name, item: keyOf(item), stray: [] });
          const shown = Object.fromEntries(Object.entries(item).filter(([a]) => copied.has(a)));
          expect(entries.get(keyOf(item))).toEqual(shown);
        }
        expect(entries.size).toBe(items.length);
      }
    }
    // Every kind of item each index lists was looked at.
    expect(Object.fromEntries([...seen].map(([name, kinds]) => [name, [...kinds].sort()]))).toEqual({
      [INDEXES.event.name]: ['EVENT', 'RSVP', 'USER'],
      [INDEXES.userEvents.name]: ['EVENT', 'PROFILE_ENTRY'],
      [INDEXES.userCreated.name]: ['EVENT', 'PROFILE_ENTRY'],
    });
  }, 120_000);
});

describe('the reads answer the same whatever the indexes copy (a stack deployed before keeps ALL: indexProjection)', () => {
  it('after a load and each kind of change: the event, its guests of every status, a user by username, the lists and their totals', async () => {
    const input = createTableInput('projection-all');
    const all = { ...input, GlobalSecondaryIndexes: input.GlobalSecondaryIndexes!.map((g) => (g.Projection?.ProjectionType === 'INCLUDE' ? { ...g, Projection: { ProjectionType: 'ALL' as const } } : g)) };
    await store.client.send(new CreateTableCommand(all));
    const tables = ['projection-all', 'projection-include'];
    for (const table of tables) {
      await ensureTable(store.client, table);
      await writeDataset(store.client, table, d0, { clock });
    }
    const appliers = tables.map((table) => new ChangeApplier(store.client, table, { clock }));
    const names = ['host', ...d0.users.map((u) => u.username), 'renamed2', 'nobody'];
    const reads = async (table: string) => {
      const repo = new DynamoRepository(store.client, table);
      // What the routes take from an entry (ALL copies the other indexes' keys and the bookkeeping too).
      const used = (item: object | null) => item && Object.fromEntries(Object.entries(item).filter(([a]) => a === 'type' || (EVENT_INDEX_ATTRIBUTES as readonly string[]).includes(a)));
      const lists = async (name: string) =>
        Promise.all(
          (['HOSTED', 'PROFILE'] as const).map(async (list) => ({
            starts: (await repo.listUserEvents(name, list, {})).map(used),
            created: (await repo.pageUserEvents(name, list, { by: 'created' }, 10)).map(used),
            total: await repo.countUserEvents(name, list, {}),
          })),
        );
      return {
        event: used(await repo.getPublicEvent(party.id)),
        guests: (await repo.getGuests(party.id, 'all', 50)).map(used),
        users: await Promise.all(names.map(async (name) => [name, await repo.userExists(name), await findUserIdsByName(store.client, table, name), await lists(name)])),
      };
    };
    for (const change of [null, ...changes]) {
      if (change) for (const applier of appliers) await applier.apply(change);
      const [copiedAll, copiedSome] = await Promise.all(tables.map(reads));
      expect(copiedSome).toEqual(copiedAll);
    }
    const listed = await reads(tables[0]!);
    expect(listed.guests.length).toBeGreaterThan(0);
    expect(listed.users.filter(([, exists]) => exists).length).toBeGreaterThan(3);
    expect(JSON.stringify(listed.users)).toContain('"total":1');
  }, 120_000);
});

describe('the change path keeps every partition within the margin at its pace', () => {
  const perChange = MARGIN_WCU / INGEST_PACE;

  it(`each stream of one kind bills its hottest partition at most ${perChange.toFixed(2)} write units a change`, async () => {
    const list = streams(16);
    const loads = await streamLoads(store.endpoint, list);
    expect(loads).toHaveLength(8);
    // Ten at once on one client (and five such): the tallies' shared recounts leave the read model a fresh load's.
    for (const [i, stream] of list.entries()) {
      expect({ stream: stream.name, model: readModel(await scanTable(store.client, `partitions-${i}`)) }).toEqual({ stream: stream.name, model: await freshLoadReadModel(store.client, `partitions-${i}-fresh`, fold(stream.d0, stream.changes).dataset) });
    }
    for (const load of loads) {
      const [hottest] = load.partitions;
      expect({ stream: load.name, hottest: hottest!.partition, within: hottest!.perChange <= perChange }).toEqual({ stream: load.name, hottest: hottest!.partition, within: true });
    }
    // RSVP status changes: the reveal's mark is not copied into event-index, so the event's index partition takes one write a change.
    const status = loads.find((l) => l.name === 'RSVP status changes on one event')!;
    expect(status.partitions.find((p) => p.partition === `${INDEXES.event.name} EVENT#evt_party`)?.perChange).toBe(1);
    // A host's burst: its tally's note is not copied into its lists, so each list partition takes one write a change.
    for (const burst of loads.filter((l) => l.name.startsWith('new events of one host in one city'))) {
      for (const index of [INDEXES.userEvents, INDEXES.userCreated]) expect(burst.partitions.find((p) => p.partition === `${index.name} USER#bighost#HOSTED`)?.perChange).toBe(1);
    }
  }, 300_000);
});
