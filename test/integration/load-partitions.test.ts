/**
 * Every partition a load writes, not only a city's (issue 59, item 6; d1 is
 * the city's place feeds and index shards): one host's 600 events in one
 * city, loaded by the real loader (local/loader.ts writeDataset) and then
 * resynced (data:load --replace) into a table without them. Under the docs'
 * loader model (8 calls in flight, 10 ms a call: docs/data-model.md,
 * "Partitions under a load"):
 *
 * - BatchWriteItem: no partition, table or index (the catalogue's member
 *   list, the host's, the host's profile and hosted lists in the
 *   user-events and user-created indexes, the creator's link partition, the
 *   place shards), takes more than 8 items of any 8 consecutive calls, 800
 *   write units a second;
 * - the feeds' bulk appends: never two at once on one scope (one appender a
 *   scope: a bulk append with its flush bills about 12 units in three calls).
 */
import { describe, expect, it } from '@jest/globals';
import { BatchWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Dataset, SourceEvent } from '../../lambdas/core/dataset.js';
import { partitionsOf } from '../../lambdas/store/table/batch-write.js';
import { ensureTable } from '../../local/dynalite.js';
import { writeDataset } from '../../local/loader.js';
import { executeResync, planResync, scanTable } from '../../local/resync.js';
import { placeEvent } from '../support/places.js';
import { useFileStore } from '../support/store.js';

const store = useFileStore({ inProcess: true, direct: true });
const IN_FLIGHT = 8;
const WCU_PER_ITEM_PER_CALL_SLOT = 100;

const host = { id: 'usr_big', username: 'big', name: null, image: null, verification_status: null };
const events: SourceEvent[] = Array.from({ length: 600 }, (_, i) =>
  placeEvent(`evt_big_${String(i).padStart(4, '0')}`, new Date(Date.parse('2027-01-01T21:00:00.000Z') + i * 3_600_000).toISOString(), 'Europe/Lisbon', 'Porto', 'PT', { creator_id: host.id }),
);
const DATASET: Dataset = { users: [host], events, rsvps: [], api_keys: [] };

/** A client that records the partitions of each BatchWriteItem, and the appends in flight per feed partition. */
function recording() {
  const calls: string[][] = [];
  const inFlight = new Map<string, number>();
  let mostAtOnce = 0;
  const client = {
    send: async (command: unknown) => {
      if (command instanceof BatchWriteCommand) {
        const requests = Object.values(command.input.RequestItems!)[0]! as { PutRequest?: { Item: Record<string, unknown> } }[];
        calls.push(requests.flatMap((r) => (r.PutRequest ? partitionsOf(r.PutRequest.Item) : [])));
      }
      if (command instanceof UpdateCommand && String(command.input.Key?.pk).startsWith('FEED#')) {
        const pk = String(command.input.Key!.pk);
        inFlight.set(pk, (inFlight.get(pk) ?? 0) + 1);
        mostAtOnce = Math.max(mostAtOnce, inFlight.get(pk)!);
        try {
          return await store.client.send(command as UpdateCommand);
        } finally {
          inFlight.set(pk, inFlight.get(pk)! - 1);
        }
      }
      return store.client.send(command as BatchWriteCommand);
    },
  } as unknown as DynamoDBDocumentClient;
  const peak = () => {
    let worst: [string, number] = ['', 0];
    for (let i = 0; i + IN_FLIGHT <= Math.max(calls.length, IN_FLIGHT); i++) {
      const counts = new Map<string, number>();
      for (const p of calls.slice(i, i + IN_FLIGHT).flat()) counts.set(p, (counts.get(p) ?? 0) + 1);
      for (const [p, n] of counts) if (n * WCU_PER_ITEM_PER_CALL_SLOT > worst[1]) worst = [p, n * WCU_PER_ITEM_PER_CALL_SLOT];
    }
    return worst;
  };
  return { client, calls, peak, appendsAtOnce: () => mostAtOnce };
}

describe('a load and a resync of one host\'s 600 events in one city: every partition', () => {
  it('the load: no partition past 800 write units a second, one appender a scope', async () => {
    const table = store.nextTable('partitions-load');
    await ensureTable(store.client, table);
    const r = recording();
    await writeDataset(r.client, table, DATASET);
    const [partition, wcu] = r.peak();
    expect({ wcu: wcu <= 800, partition, calls: r.calls.length > 0 }).toEqual({ wcu: true, partition, calls: true });
    expect(r.appendsAtOnce()).toBe(1);
  });

  it('the resync that brings them: the same', async () => {
    const table = store.nextTable('partitions-resync');
    await ensureTable(store.client, table);
    await writeDataset(store.client, table, { ...DATASET, events: [] });
    const r = recording();
    await executeResync(r.client, table, planResync(await scanTable(store.client, table), DATASET));
    const [partition, wcu] = r.peak();
    expect({ wcu: wcu <= 800, partition }).toEqual({ wcu: true, partition });
    expect(r.appendsAtOnce()).toBe(1);
  }, 60_000);
});
