/**
 * A changed derivation of the place keys (the fold, the country table, the
 * local start's time-zone rules) leaves a deployed table's events under
 * their old keys until each is derived again; a resync (`data:load
 * --replace`, local/resync.ts) is how the table gets there
 * (docs/data-model.md, "A changed fold re-keys stored places"). Here the
 * table is made as the fold before issue 59 wrote it (toLowerCase and NFKD
 * mark-stripping: "Łódź" was `łodz`, "Gießen" `gießen`; the index entries
 * and the place feeds' member lists under those keys), then resynced with
 * the same file: every event item is rewritten with the keys a fresh load
 * gives, each old place scope loses its member (its follower meets
 * `removed`), each new one lists it, and the search finds the events by the
 * spellings people type.
 */
import { describe, expect, it } from '@jest/globals';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Dataset, SourceEvent } from '../../lambdas/core/dataset.js';
import { cityKey, placeName, type PlaceKey } from '../../lambdas/core/place.js';
import { feedScopes } from '../../lambdas/core/feed-cursor.js';
import { deriveEventItem, placeIndexKeys, userRecord } from '../../lambdas/store/changes/derive.js';
import { memberKey } from '../../lambdas/store/feeds/feed.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { INDEXES } from '../../lambdas/store/table/table.js';
import { executeResync, planResync, scanTable } from '../../local/resync.js';
import { placeEvent } from '../support/places.js';
import { useFileStore } from '../support/store.js';

const store = useFileStore({ inProcess: true, direct: true });

const at = (id: string, city: string, country: string): SourceEvent => placeEvent(id, '2027-03-10T18:00:00.000Z', 'Europe/Warsaw', city, country, { creator_id: 'usr_ann', title: `In ${city}` });
const EVENTS = [at('evt_lodz', 'Łódź', 'PL'), at('evt_giessen', 'Gießen', 'Deutschland')];
const DATASET: Dataset = { users: [{ id: 'usr_ann', username: 'ann', name: null, image: null, verification_status: null }], events: EVENTS, rsvps: [], api_keys: [] };

/** The fold before issue 59: case by toLowerCase, marks by NFKD, a country by English only ("Deutschland" was `~deutschland`). */
const oldCity = (raw: string) => raw.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/gu, ' ').trim();
const OLD_PLACE: Record<string, PlaceKey> = { evt_lodz: { country: 'PL', city: oldCity('Łódź') }, evt_giessen: { country: '~deutschland', city: oldCity('Gießen') } };
const queriesOf = (p: PlaceKey): PlaceKey[] => [p, { country: p.country! }, { city: p.city! }];
const INDEX_ATTRIBUTES: string[] = [INDEXES.place, INDEXES.country, INDEXES.city].flatMap((i) => [i.partitionKey, i.sortKey]);

describe('a resync re-keys the places a changed fold moved', () => {
  it('rewrites every event item with a fresh load\'s keys, moves each member from its old scopes to its new ones, and the search finds the events again', async () => {
    const table = await store.loaded('rekey', DATASET);
    const repo = new DynamoRepository(store.client, table);
    const byCity = async (city: string) => (await repo.searchEvents({ place: { city: cityKey(city)! }, from: '2027-03-01', to: '2027-03-31', limit: 10 })).events.map((e) => e.event_id);

    // The table as the old fold left it: its index keys and its place scopes' members.
    for (const item of await scanTable(store.client, table)) {
      if (item.type !== 'EVENT') continue;
      const id = String(item.event_id);
      const old = OLD_PLACE[id]!;
      const oldKeys: Record<string, string> = Object.assign(
        {},
        ...queriesOf(old).map((q) => {
          const fresh = placeIndexKeys({ event_id: id, location: { name: 'x', city: 'x', country: 'x' }, start_date: '2027-03-10T18:00:00.000Z', timezone: 'Europe/Warsaw' });
          const index = q.city === undefined ? INDEXES.country : q.country === undefined ? INDEXES.city : INDEXES.place;
          return { [index.partitionKey]: `PLACE#${placeName(q)}#${String(fresh[index.partitionKey]).split('#').at(-1)}`, [index.sortKey]: fresh[index.sortKey] };
        }),
      );
      await store.client.send(new PutCommand({ TableName: table, Item: { ...Object.fromEntries(Object.entries(item).filter(([k]) => !INDEX_ATTRIBUTES.includes(k))), ...oldKeys } }));
      const event = EVENTS.find((e) => e.id === id)!;
      const now = { country: event.location!.country!, city: event.location!.city! };
      const fresh: PlaceKey = { country: now.country === 'PL' ? 'PL' : 'DE', city: cityKey(now.city)! };
      for (const q of queriesOf(fresh)) await store.client.send(new DeleteCommand({ TableName: table, Key: memberKey(feedScopes.place(placeName(q)), id) }));
      for (const q of queriesOf(old)) await store.client.send(new PutCommand({ TableName: table, Item: { ...memberKey(feedScopes.place(placeName(q)), id), type: 'FEED_MEMBER', gen: 0 } }));
    }
    expect(await byCity('Lodz')).toEqual([]);
    expect(await byCity('GIESSEN')).toEqual([]);

    const plan = planResync(await scanTable(store.client, table), DATASET);
    expect(plan.puts.filter((i) => i.type === 'EVENT').map((i) => i.event_id).sort()).toEqual(['evt_giessen', 'evt_lodz']);
    await executeResync(store.client, table, plan);

    const items = await scanTable(store.client, table);
    for (const event of EVENTS) {
      const stored = items.find((i) => i.type === 'EVENT' && i.event_id === event.id)!;
      const derived = deriveEventItem({ event, creator: userRecord(DATASET.users[0]!) })[0]! as unknown as Record<string, unknown>;
      expect(Object.fromEntries(INDEX_ATTRIBUTES.map((k) => [k, stored[k]]))).toEqual(Object.fromEntries(INDEX_ATTRIBUTES.map((k) => [k, derived[k]])));
    }
    const members = items.filter((i) => i.type === 'FEED_MEMBER' && String(i.pk).startsWith('FEED#M#PLACE#')).map((i) => `${String(i.pk)} ${String(i.sk)}`);
    const listed = (place: PlaceKey, id: string) => queriesOf(place).map((q) => `FEED#M#${feedScopes.place(placeName(q))} M#${id}`);
    const now = [...listed({ country: 'PL', city: 'lodz' }, 'evt_lodz'), ...listed({ country: 'DE', city: 'giessen' }, 'evt_giessen')];
    expect(members.sort()).toEqual(now.sort());
    // Each old scope that is not a new one (PL alone is both) has lost its member.
    expect(Object.entries(OLD_PLACE).flatMap(([id, old]) => listed(old, id)).filter((m) => !now.includes(m)).length).toBe(5);
    expect(await byCity('Lodz')).toEqual(['evt_lodz']);
    expect(await byCity('GIESSEN')).toEqual(['evt_giessen']);
    expect((await repo.searchEvents({ place: { country: 'DE' }, from: '2027-03-01', to: '2027-03-31', limit: 10 })).events.map((e) => e.event_id)).toEqual(['evt_giessen']);
  });
});
