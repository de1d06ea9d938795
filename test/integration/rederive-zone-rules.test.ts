/**
 * Derived local starts brought up to date when the zone rules change (issue
 * 59, item 4): the indexed local start is derived once, when the event item
 * is written; a deployment with a newer time-zone database (`npm run
 * places:tz`) leaves the events written before it at their old local starts.
 * `npm run data:rederive` (local/rederive.ts) derives every item again from
 * the table's own sources and rewrites what differs.
 *
 * The table here is what a derivation under IANA 2025c wrote (British
 * Columbia still on daylight time in winter: an event at 2026-12-01T07:30Z
 * in Vancouver indexed at 2026-11-30 23:30); the database now (2026a and
 * later) says UTC−7 from November 2026, 00:30 on the 1st. Before the
 * re-derivation a search for the 1st misses it; after, it finds it, every
 * place entry equals a fresh load's, an unchanged event is not rewritten,
 * and a second run has nothing to do; and over the CLI, as an operator runs it.
 */
import { describe, expect, it } from '@jest/globals';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Dataset, SourceEvent } from '../../lambdas/core/dataset.js';
import { cityKey } from '../../lambdas/core/place.js';
import { deriveEventItem, userRecord } from '../../lambdas/store/changes/derive.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { INDEXES } from '../../lambdas/store/table/table.js';
import { datasetFromSources } from '../../local/rederive.js';
import { executeResync, planResync, scanTable } from '../../local/resync.js';
import { runTs } from '../support/process.js';
import { placeEvent } from '../support/places.js';
import { useFileStore } from '../support/store.js';

const store = useFileStore({ inProcess: true, direct: true });

const at = (id: string, city: string, start: string, timezone: string): SourceEvent => placeEvent(id, start, timezone, city, 'CA', { creator_id: 'usr_ann', title: `In ${city}` });
const VANCOUVER = at('evt_vancouver', 'Vancouver', '2026-12-01T07:30:00.000Z', 'America/Vancouver');
const TORONTO = at('evt_toronto', 'Toronto', '2026-12-01T18:00:00.000Z', 'America/Toronto');
const DATASET: Dataset = { users: [{ id: 'usr_ann', username: 'ann', name: null, image: null, verification_status: null }], events: [VANCOUVER, TORONTO], rsvps: [], api_keys: [] };
const SORT_KEYS = [INDEXES.place, INDEXES.country, INDEXES.city].map((i) => i.sortKey);
const PLACE_KEYS: string[] = [INDEXES.place, INDEXES.country, INDEXES.city].flatMap((i) => [i.partitionKey, i.sortKey]);

describe('a newer time-zone database: the stored local starts derived again', () => {
  it('the re-derivation rewrites the event the new rules move, and only it; the search finds it on its new local date', async () => {
    const table = await store.loaded('rederive', DATASET);
    const repo = new DynamoRepository(store.client, table);
    const onThe1st = async () => (await repo.searchEvents({ place: { city: cityKey('Vancouver')! }, from: '2026-12-01', to: '2026-12-01', limit: 10 })).events.map((e) => e.event_id);
    expect(await onThe1st()).toEqual(['evt_vancouver']);

    // The event item as the 2025c rules derived it: 23:30 on 30 November.
    const before = await scanTable(store.client, table);
    const item = before.find((i) => i.type === 'EVENT' && i.event_id === VANCOUVER.id)!;
    await store.client.send(new PutCommand({ TableName: table, Item: { ...item, ...Object.fromEntries(SORT_KEYS.map((k) => [k, '2026-11-30T23:30:00#evt_vancouver'])) } }));
    expect(await onThe1st()).toEqual([]);

    const items = await scanTable(store.client, table);
    const plan = planResync(items, datasetFromSources(items));
    expect(plan.puts.map((p) => `${String(p.type)} ${String(p.event_id ?? '')}`)).toEqual(['EVENT evt_vancouver']);
    expect(plan.deletes).toEqual([]);
    await executeResync(store.client, table, plan);

    expect(await onThe1st()).toEqual(['evt_vancouver']);
    const after = await scanTable(store.client, table);
    for (const event of DATASET.events) {
      const stored = after.find((i) => i.type === 'EVENT' && i.event_id === event.id)!;
      const fresh = deriveEventItem({ event, creator: userRecord(DATASET.users[0]!) })[0]! as unknown as Record<string, unknown>;
      expect(Object.fromEntries(PLACE_KEYS.map((k) => [k, stored[k]]))).toEqual(Object.fromEntries(PLACE_KEYS.map((k) => [k, fresh[k]])));
    }
    // Versions are bookkeeping: the sources keep theirs.
    expect(after.filter((i) => i.type === 'EVENT_SOURCE').map((i) => i.version)).toEqual([0, 0]);
    const again = planResync(after, datasetFromSources(after));
    expect([again.puts.length, again.deletes.length]).toEqual([0, 0]);
  });

  it('leaves tombstones, deleted users and the keys as they are (the dataset the sources describe is the live one)', async () => {
    const table = await store.loaded('rederive-live', { ...DATASET, api_keys: [{ key: 'k'.repeat(32), user_id: 'usr_ann', name: 'ann key', scopes: ['events:read'] }] });
    const items = await scanTable(store.client, table);
    const dataset = datasetFromSources(items);
    expect({ users: dataset.users.map((u) => u.id), events: dataset.events.map((e) => e.id) }).toEqual({ users: ['usr_ann'], events: ['evt_toronto', 'evt_vancouver'] });
    const plan = planResync(items, dataset);
    expect({ puts: plan.puts.length, deletes: plan.deletes.length, keys: plan.keys }).toEqual({ puts: 0, deletes: 0, keys: { close: [], reopen: [], adopt: [] } });
  });

  it('over the CLI, as an operator runs it: --dry-run says what it would rewrite and writes nothing, then the run rewrites it', async () => {
    const table = await store.loaded('rederive-cli', DATASET);
    const item = (await scanTable(store.client, table)).find((i) => i.type === 'EVENT' && i.event_id === VANCOUVER.id)!;
    await store.client.send(new PutCommand({ TableName: table, Item: { ...item, ...Object.fromEntries(SORT_KEYS.map((k) => [k, '2026-11-30T23:30:00#evt_vancouver'])) } }));
    const dry = await runTs('local/cli/data-rederive.ts', ['--endpoint', store.endpoint, '--table', table, '--dry-run']).done;
    expect({ code: dry.code, stdout: dry.stdout }).toEqual({ code: 0, stdout: expect.stringContaining('Dry run (nothing written): would derive') });
    const stale = (await scanTable(store.client, table)).find((i) => i.type === 'EVENT' && i.event_id === VANCOUVER.id)!;
    expect(stale[SORT_KEYS[0]!]).toBe('2026-11-30T23:30:00#evt_vancouver');
    const run = await runTs('local/cli/data-rederive.ts', ['--endpoint', store.endpoint, '--table', table]).done;
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: expect.stringContaining(`Derived ${table} again from its own sources`) });
    const fixed = (await scanTable(store.client, table)).find((i) => i.type === 'EVENT' && i.event_id === VANCOUVER.id)!;
    expect(fixed[SORT_KEYS[0]!]).toBe('2026-12-01T00:30:00#evt_vancouver');
  }, 60_000);
});
