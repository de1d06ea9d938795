/**
 * The tally summaries moved out of their entries' partition (a partition a
 * level, and the recount tickets beside them: lambdas/store/table/tally.ts),
 * so a table loaded before counts nothing where the reads now look until a
 * resync (docs/deploy.md, "Upgrading a table loaded by an earlier
 * version"). Here the table is made as the earlier layout left it (every
 * summary in `TALLY#USER#…`, its ticket on it), then resynced with the same
 * file: the totals are right, the earlier summaries gone, the read model a
 * fresh load's, and the tickets changes took since are kept (a ticket only
 * grows: one that started again would be refused by its summary's
 * `counted`), so the changes after it keep the totals right.
 */
import { describe, expect, it } from '@jest/globals';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Dataset, SourceEvent } from '../../lambdas/core/dataset.js';
import { fold } from '../../lambdas/core/fold.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { PK, SK } from '../../lambdas/store/table/table.js';
import { executeResync, planResync, scanTable } from '../../local/resync.js';
import { clock } from '../support/party.js';
import { freshLoadReadModel, readModel } from '../support/read-model.js';
import { useFileStore } from '../support/store.js';

const store = useFileStore({ inProcess: true, direct: true });

const event = (i: number): SourceEvent => ({
  id: `evt_${i}`,
  creator_id: 'usr_ann',
  title: `Night ${i}`,
  description: null,
  cover: null,
  location: null,
  start_date: new Date(Date.parse('2026-12-20T20:00:00.000Z') + i * 9 * 86_400_000).toISOString(),
  end_date: null,
  timezone: 'UTC',
  status: 'published',
  visibility: 'public',
  cost: null,
  created_at: '2026-11-01T00:00:00.000Z',
});
const DATASET: Dataset = { users: [{ id: 'usr_ann', username: 'ann', name: null, image: null, verification_status: null }], events: Array.from({ length: 6 }, (_, i) => event(i)), rsvps: [], api_keys: [] };

describe('a resync moves the tally summaries of an earlier layout', () => {
  it('writes them where the reads look, deletes the earlier ones, keeps the tickets, and the totals stay right after', async () => {
    const table = await store.loaded('tally-layout', DATASET);
    const repo = new DynamoRepository(store.client, table);
    const total = () => repo.countUserEvents('ann', 'HOSTED', {});
    expect(await total()).toBe(6);

    // The earlier layout: each summary in its list's entries partition. A change since took a ticket on one.
    const earlier: Record<string, unknown>[] = [];
    for (const item of await scanTable(store.client, table)) {
      if (item.type !== 'TALLY_SUMMARY') continue;
      const old = { ...item, [PK]: `TALLY#${String(item[PK]).slice('TALLY#D#'.length)}`, ticket: 3, counted: 3 };
      earlier.push(old);
      await store.client.send(new PutCommand({ TableName: table, Item: old }));
      await store.client.send(new DeleteCommand({ TableName: table, Key: { [PK]: item[PK], [SK]: item[SK] } }));
    }
    expect(earlier.length).toBeGreaterThan(6);
    const ticket = { [PK]: 'TALLY#YT#USER#ann#HOSTED', [SK]: 'Y#2027', type: 'TALLY_TICKET', ticket: 7 };
    await store.client.send(new PutCommand({ TableName: table, Item: ticket }));
    expect(await total()).toBe(0);

    const plan = planResync(await scanTable(store.client, table), DATASET);
    expect(plan.deletes.map((k) => `${String(k[PK])} ${String(k[SK])}`).sort()).toEqual(earlier.map((k) => `${String(k[PK])} ${String(k[SK])}`).sort());
    await executeResync(store.client, table, plan);

    expect(await total()).toBe(6);
    const items = await scanTable(store.client, table);
    expect(readModel(items)).toEqual(await freshLoadReadModel(store.client, `${table}-fresh`, DATASET));
    expect(items.find((i) => i[PK] === ticket[PK] && i[SK] === ticket[SK])).toEqual(ticket);

    // Changes after the resync recount under the kept tickets: a new event in 2027 and one gone.
    const applier = new ChangeApplier(store.client, table, { clock });
    const changes = [
      { type: 'event.upserted' as const, version: 1, event: event(7) },
      { type: 'event.deleted' as const, version: 1, event_id: 'evt_1' },
    ];
    for (const change of changes) await applier.apply(change);
    expect(await total()).toBe(6);
    expect(await repo.countUserEvents('ann', 'HOSTED', { from: '2027-01-01T00:00:00.000Z' })).toBe(fold(DATASET, changes).dataset.events.filter((e) => e.start_date >= '2027-01-01').length);
    expect(readModel(await scanTable(store.client, table))).toEqual(await freshLoadReadModel(store.client, `${table}-after`, fold(DATASET, changes).dataset));
  });
});
