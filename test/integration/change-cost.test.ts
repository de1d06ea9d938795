/**
 * The write side's cost rule: a change costs what it touches. The same RSVP
 * changes and the same edits that move no list make the same DynamoDB calls,
 * read the same capacity (within the bucket reads' small growth) and write the
 * same items on an event of 3 guests and on one of 300; an edit that moves no
 * list writes the event item alone, whatever the members. `npm run bench`
 * measures the same rows at 10, 1,000 and 10,000 guests, billed.
 *
 * Also here: profile entries point at their event, so a profile list shows
 * only an event whose own item is public, whatever the entries say.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Change } from '../../lambdas/core/changes.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { GUEST_COUNT_BUCKETS, GUEST_SHARDS, countBucket, guestShard, keys } from '../../lambdas/store/table/table.js';
import { ensureTable } from '../../local/dynalite.js';
import { writeDataset } from '../../local/loader.js';
import { clock, host, party } from '../support/party.js';
import { startTestStore, type TestStore } from '../support/store.js';

let store: TestStore;
beforeAll(async () => {
  store = await startTestStore();
});
afterAll(async () => store?.close());

const newcomer = { id: 'usr_new', username: 'newcomer' };

function crowd(size: number): Dataset {
  const guests = Array.from({ length: size }, (_, i) => ({ id: `usr_c${i}`, username: `crowd${i}` }));
  return {
    users: [host, newcomer, ...guests],
    events: [party],
    rsvps: guests.map((g, i) => ({ event_id: party.id, user_id: g.id, status: i % 2 ? ('yes' as const) : ('maybe' as const), rsvp_date: '2026-11-02T00:00:00.000Z' })),
  };
}

/** What a metered client saw: calls by command, read capacity, and the sort keys of the items written. */
function metered(endpoint: string) {
  const client = createDocumentClient({ endpoint });
  const seen = { calls: [] as string[], rcu: 0, written: [] as string[], marks: [] as string[], retired: [] as string[] };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ReturnConsumedCapacity?: string; Item?: { sk?: unknown }; Key?: { sk?: unknown }; UpdateExpression?: string };
      seen.calls.push(String(context.commandName));
      if (/Get|Query/.test(String(context.commandName))) input.ReturnConsumedCapacity = 'TOTAL';
      // At this step the keys may already be marshalled ({ S: '…' }).
      const raw = input.Item?.sk ?? input.Key?.sk;
      const sk = raw && typeof raw === 'object' ? (raw as { S?: string }).S : raw;
      if (/Put|Update/.test(String(context.commandName)) && sk !== undefined) seen.written.push(String(sk));
      // A reveal's first step (derivation.ts): the item marked, its content untouched.
      if (/^SET revealing = :token/.test(input.UpdateExpression ?? '') && sk !== undefined) seen.marks.push(String(sk));
      // A tombstone's last step once its feed entries are written: its note cleared, its expiry set (derivation.ts).
      if (/^REMOVE .*#note.* SET #ttl/.test(input.UpdateExpression ?? '') && sk !== undefined) seen.retired.push(String(sk));
      const out = await next(args);
      const used = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      seen.rcu += [used ?? []].flat().reduce((n, c) => n + (c.CapacityUnits ?? 0), 0);
      return out;
    },
    { step: 'build', name: 'costMeter' },
  );
  return { client, seen };
}

const changes: [string, Change][] = [
  ['a new RSVP', { type: 'rsvp.upserted', version: 1, rsvp: { event_id: party.id, user_id: newcomer.id, status: 'yes', rsvp_date: '2026-11-03T00:00:00.000Z' } }],
  ['an RSVP status change', { type: 'rsvp.upserted', version: 1, rsvp: { event_id: party.id, user_id: 'usr_c0', status: 'no', rsvp_date: '2026-11-02T00:00:00.000Z' } }],
  ['an RSVP deletion', { type: 'rsvp.deleted', version: 1, event_id: party.id, user_id: 'usr_c1' }],
  ['a title edit', { type: 'event.upserted', version: 1, event: { ...party, title: 'Party, renamed' } }],
  ['a description and cost edit', { type: 'event.upserted', version: 2, event: { ...party, title: 'Party, renamed', description: 'Bring a friend.', cost: 5 } }],
];

async function costs(size: number) {
  const table = `cost-${size}`;
  await ensureTable(store.client, table);
  await writeDataset(store.client, table, crowd(size));
  const { client, seen } = metered(store.endpoint);
  const applier = new ChangeApplier(client, table, { clock });
  const out: Record<string, { calls: string[]; rcu: number; written: string[]; marks: string[]; retired: string[] }> = {};
  for (const [name, change] of changes) {
    Object.assign(seen, { calls: [], rcu: 0, written: [], marks: [], retired: [] });
    expect((await applier.apply(change)).result).toBe('applied');
    out[name] = { calls: [...seen.calls], rcu: seen.rcu, written: [...seen.written], marks: [...seen.marks], retired: [...seen.retired] };
  }
  client.destroy();
  return out;
}

describe('a change costs what it touches, not the size of its event', () => {
  let small: Awaited<ReturnType<typeof costs>>;
  let large: Awaited<ReturnType<typeof costs>>;
  beforeAll(async () => {
    small = await costs(3);
    large = await costs(300);
  }, 120_000);

  it.each(changes.map(([name]) => [name]))('%s: the same calls and writes, and read capacity within 1.5, on 3 and on 300 guests', (name) => {
    // The same calls, in any order: a wave's calls go together (docs/data-model.md, "A change in waves"), so which one
    // a later call follows depends on which answered first.
    expect([...large[name]!.calls].sort()).toEqual([...small[name]!.calls].sort());
    expect(large[name]!.written.length).toBe(small[name]!.written.length);
    expect(large[name]!.rcu).toBeLessThanOrEqual(1.5 * small[name]!.rcu);
  });

  // The changes feeds add their own writes (entries, members) and nothing else: the note that makes them crash-safe
  // rides on the derived item's own write, so each event or RSVP item gets one write (besides a reveal's mark, and a
  // tombstone's expiry, set once its entries are written: it must not expire with the note it holds).
  it.each(changes.map(([name]) => [name]))('%s: each event or RSVP item written once besides a reveal\'s mark and a tombstone\'s expiry, the feeds apart', (name) => {
    const { written, marks, retired } = large[name]!;
    const derived = written.filter((sk) => sk === 'EVENT' || sk.startsWith('RSVP#'));
    const content = [...derived];
    for (const step of [...marks, ...retired].filter((sk) => content.includes(sk))) content.splice(content.indexOf(step), 1);
    expect(content.length).toBeGreaterThan(0);
    expect(content).toEqual([...new Set(derived)]);
  });

  it.each(['a title edit', 'a description and cost edit'])('%s writes the event item and its own bookkeeping, no guest item', (name) => {
    const written = large[name]!.written;
    expect(written.filter((sk) => /^(RSVP|PROFILE|COUNT)/.test(sk))).toEqual([]);
    expect(written).toContain('EVENT');
  });
});

describe('count buckets', () => {
  it('spread user ids over every bucket, stably', () => {
    const used = new Set(Array.from({ length: 10_000 }, (_, i) => countBucket(`usr_${i}`)));
    expect(used.size).toBe(GUEST_COUNT_BUCKETS);
    // The bucket is part of a stored key: it must never change between releases or runtimes.
    expect(['usr_a', 'usr_b', 'usr_host'].map(countBucket)).toEqual(['17', '24', '52']);
  });

  it('put each bucket in one guest shard, and each user in their bucket\'s shard, stably', () => {
    // The shard is part of every guest item's key, and a recount reads its bucket's entries from one shard: so
    // every user of a count bucket must have the same guest partition, read off the keys the store writes.
    expect(GUEST_SHARDS).toBe(8);
    expect(['usr_a', 'usr_b', 'usr_host'].map(guestShard)).toEqual([1, 0, 4]); // pinned: a change moves every guest item
    const partitionsOfBucket = new Map<string, Set<string>>();
    const partitions = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const user = `usr_${i}`;
      const guestItems = [keys.rsvpSource, keys.rsvp, keys.profileEntry, keys.guestSeq, keys.guestCount].map((key) => String(key('evt_x', user).pk));
      expect(new Set(guestItems).size).toBe(1); // a guest's items live together
      const bucket = /^COUNT#(\d\d)#/.exec(String(keys.guestCount('evt_x', user).sk))?.[1];
      expect(bucket).toBeDefined();
      const seen = partitionsOfBucket.get(bucket!) ?? new Set<string>();
      partitionsOfBucket.set(bucket!, seen.add(guestItems[0]!));
      partitions.add(guestItems[0]!);
    }
    expect(partitionsOfBucket.size).toBe(GUEST_COUNT_BUCKETS); // 2,000 users reach every bucket
    expect([...partitionsOfBucket.values()].filter((s) => s.size !== 1)).toEqual([]);
    expect([...partitions].sort()).toEqual(Array.from({ length: GUEST_SHARDS }, (_, s) => `EVENT#evt_x#G${s}`).sort());
  });
});

describe('profile entries point at their event', () => {
  it('a profile list shows an event only while its own item is public, whatever its entries say', async () => {
    const table = 'pointer-lag';
    await ensureTable(store.client, table);
    await writeDataset(store.client, table, crowd(2));
    const repo = new DynamoRepository(store.client as DynamoDBDocumentClient, table);
    const list = () => repo.listUserEvents('crowd1', 'PROFILE', {});
    expect((await list()).map((e) => e.event_id)).toEqual([party.id]);
    // The event item leaves the event index (a hide, landed) while the member's entry is still listed (its hide on its way).
    await store.client.send(new UpdateCommand({ TableName: table, Key: keys.event(party.id), UpdateExpression: 'REMOVE gsi1pk, gsi1sk' }));
    expect(await list()).toEqual([]);
  });
});
