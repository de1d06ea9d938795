/**
 * Issue 44, item 5 (a): is a live event item's feed note carried into its
 * later versions so that entries owed once are appended again, to a former
 * host's feed among others? Driven through the real applier on the real
 * table: an event changes host (or is hidden), is edited several times, its
 * old and new hosts are renamed and deleted, a write fails on the way and the
 * change is delivered again, and the event is deleted at the end. After every
 * delivery the entries each scope got are counted from its head, and:
 *
 * - each change appends only to scopes that a version it writes, or the one
 *   that version replaced, shows the event in (feed.ts, `scopesToAppend`); a
 *   delivery that finds the source pending (a failed write's redelivery)
 *   appends what the change it finishes owed, and nothing more;
 * - the stored event item's note, once its source is settled, names only
 *   scopes the item shows (so whatever meets it later, a recovering settle or
 *   the deletion's tombstone, appends to no scope the event has left).
 *
 * What it found: the note of the host change ([catalogue, old host, new
 * host]) rode on every later version, so the event's deletion, and any
 * recovering settle after a failed write, appended `removed` to the former
 * host's feed once more (and after a hide, to the catalogue and the host's
 * feed once more). The fix (version-writes.ts, `finish`): a version that
 * moves its tally entry, which every version that leaves a scope does,
 * records its whole note and clears it in the write that clears its tally
 * note, so no extra write; a version that leaves no scope keeps its note as
 * before, naming only scopes it shows.
 */
import { describe, expect, it } from '@jest/globals';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Change } from '../../lambdas/core/changes.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { FEED_HEAD_PREFIX, FEED_NOTE, FEED_PARTITION_PREFIX, scopesShowing } from '../../lambdas/store/feeds/feed.js';
import { keys } from '../../lambdas/store/table/table.js';
import { NOW, dataset, event, user } from '../support/feed-review.js';
import { scanAll } from '../support/read-model.js';
import { useFileStore } from '../support/store.js';

const store = useFileStore({ inProcess: true, direct: true });
const clock = fixedClock(NOW.toISOString());

const ann = user('usr_ann', 'ann');
const bob = user('usr_bob', 'bob');
const cat = user('usr_cat', 'cat');
const d0 = dataset([ann, bob, cat], [event('evt_a', ann.id, 'A v1')]);
const CATALOGUE = 'EVENTS';
const ANN = `HOST#${ann.id}`;
const BOB = `HOST#${bob.id}`;

/** Each scope's entries so far: over its head shards, base + tail length - 1 of each (0 before any entry). */
async function positions(client: DynamoDBDocumentClient, table: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const item of await scanAll(client, table)) {
    const pk = String(item.pk);
    if (!pk.startsWith(FEED_PARTITION_PREFIX) || !String(item.sk).startsWith(FEED_HEAD_PREFIX)) continue;
    const scope = pk.slice(FEED_PARTITION_PREFIX.length);
    out.set(scope, (out.get(scope) ?? 0) + Number(item.base) + (item.tail as string[]).length - 1);
  }
  return out;
}

/** The entries appended to each scope between two readings (scopes that got none left out). */
function appended(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [scope, last] of after) if (last > (before.get(scope) ?? 0)) out[scope] = last - (before.get(scope) ?? 0);
  return out;
}

/** A client on the store whose first write matching `fails` throws without reaching it. */
function failingOnce(fails: (command: string, input: Record<string, unknown>) => boolean): DynamoDBDocumentClient {
  const client = store.newClient();
  let failed = false;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = (args as { input: Record<string, unknown> }).input;
      if (!failed && fails(String(context.commandName), input)) {
        failed = true;
        throw Object.assign(new Error('Rate exceeded (simulated)'), { name: 'ThrottlingException' });
      }
      return next(args);
    },
    { step: 'initialize', name: 'failOnce' },
  );
  return client;
}
/** The append to a scope's head (an UpdateItem of `FEED#{scope}` / `H`; the in-process client names the low-level command). */
const appendTo = (scope: string) => (command: string, input: Record<string, unknown>) => /^Update/.test(command) && (input.Key as Record<string, string>)?.pk === `FEED#${scope}` && String((input.Key as Record<string, string> | undefined)?.sk).startsWith(FEED_HEAD_PREFIX);

interface Step {
  name: string;
  change: Change;
  /** Entries each scope gets from this delivery, exactly (every other scope: none). */
  entries: Record<string, number>;
  /** The delivery fails at this write (the change is then delivered again by a later step). */
  failing?: (command: string, input: Record<string, unknown>) => boolean;
}

const edit = (version: number, host: string, extra: Parameters<typeof event>[3] = {}): Change => ({ type: 'event.upserted', version, event: event('evt_a', host, `A v${version}`, extra) });

/** Runs the steps on a fresh table, checking after each what it appended and what the event item still notes. */
async function run(steps: Step[]): Promise<void> {
  const table = await store.loaded('note-carry', d0);
  for (const step of steps) {
    const before = await positions(store.client, table);
    if (step.failing) {
      const client = failingOnce(step.failing);
      await expect(new ChangeApplier(client, table, { clock, fanOutConcurrency: 1 }).apply(step.change)).rejects.toThrow('Rate exceeded');
      client.destroy();
    } else {
      await new ChangeApplier(store.client, table, { clock, fanOutConcurrency: 1 }).apply(step.change);
    }
    const got = appended(before, await positions(store.client, table));
    expect({ step: step.name, appended: got }).toEqual({ step: step.name, appended: step.entries });
    if (step.failing) continue;
    // Settled: the event's source owes nothing, and its item's note names only scopes the item shows.
    const items = await scanAll(store.client, table);
    const source = items.find((i) => i.pk === keys.eventSource('evt_a').pk && i.sk === keys.eventSource('evt_a').sk);
    expect({ step: step.name, pending: source?.pending }).toEqual({ step: step.name, pending: undefined });
    const item = items.find((i) => i.pk === keys.event('evt_a').pk && i.sk === keys.event('evt_a').sk);
    const note = (item?.[FEED_NOTE] as string[] | undefined) ?? [];
    const shown = item?.type === 'TOMBSTONE' ? [] : scopesShowing(item);
    expect({ step: step.name, notedButNotShown: note.filter((s) => !shown.includes(s)) }).toEqual({ step: step.name, notedButNotShown: [] });
  }
}

describe('a live event item\'s feed note is not appended again once its source is settled (issue 44, 5a)', () => {
  it('a host change, edits, the hosts renamed and the former host deleted, then the deletion: the former host hears of the event once', async () => {
    await run([
      { name: 'host ann → bob', change: edit(2, bob.id), entries: { [CATALOGUE]: 1, [ANN]: 1, [BOB]: 1 } },
      { name: 'edit v3', change: edit(3, bob.id), entries: { [CATALOGUE]: 1, [BOB]: 1 } },
      { name: 'edit v4', change: edit(4, bob.id), entries: { [CATALOGUE]: 1, [BOB]: 1 } },
      { name: 'bob renamed', change: { type: 'user.upserted', version: 2, user: { ...bob, username: 'bobby' } }, entries: { [CATALOGUE]: 1, [BOB]: 1 } },
      { name: 'edit v5', change: edit(5, bob.id), entries: { [CATALOGUE]: 1, [BOB]: 1 } },
      { name: 'ann (former host) renamed', change: { type: 'user.upserted', version: 2, user: { ...ann, username: 'annie' } }, entries: {} },
      { name: 'ann (former host) deleted', change: { type: 'user.deleted', version: 3, user_id: ann.id }, entries: {} },
      { name: 'edit v6', change: edit(6, bob.id), entries: { [CATALOGUE]: 1, [BOB]: 1 } },
      { name: 'event deleted', change: { type: 'event.deleted', version: 7, event_id: 'evt_a' }, entries: { [CATALOGUE]: 1, [BOB]: 1 } },
    ]);
  }, 30_000);

  it('a host change whose append to the former host fails: the next edit finishes it (the former host hears of it once), later edits and the deletion do not', async () => {
    await run([
      // The change dies at its append to ann's feed; the catalogue's (same wave) landed, bob's (after his join) never ran.
      { name: 'host ann → bob, ann\'s append failing', change: edit(2, bob.id), failing: appendTo(ANN), entries: { [CATALOGUE]: 1 } },
      // The next change finds the source pending: the recovering settle appends every scope the host change owed, then the edit its own.
      { name: 'edit v3 (finishes v2)', change: edit(3, bob.id), entries: { [CATALOGUE]: 2, [ANN]: 1, [BOB]: 2 } },
      { name: 'edit v4', change: edit(4, bob.id), entries: { [CATALOGUE]: 1, [BOB]: 1 } },
      { name: 'host bob → cat', change: edit(5, cat.id), entries: { [CATALOGUE]: 1, [BOB]: 1, [`HOST#${cat.id}`]: 1 } },
      { name: 'edit v6', change: edit(6, cat.id), entries: { [CATALOGUE]: 1, [`HOST#${cat.id}`]: 1 } },
      { name: 'event deleted', change: { type: 'event.deleted', version: 7, event_id: 'evt_a' }, entries: { [CATALOGUE]: 1, [`HOST#${cat.id}`]: 1 } },
    ]);
  }, 30_000);

  it('a later edit whose catalogue append fails, delivered again: the recovering settle appends what that edit owed, not the host change before it', async () => {
    await run([
      { name: 'host ann → bob', change: edit(2, bob.id), entries: { [CATALOGUE]: 1, [ANN]: 1, [BOB]: 1 } },
      { name: 'edit v3', change: edit(3, bob.id), entries: { [CATALOGUE]: 1, [BOB]: 1 } },
      // Bob's append (same wave) lands; the catalogue's fails.
      { name: 'edit v4, the catalogue append failing', change: edit(4, bob.id), failing: appendTo(CATALOGUE), entries: { [BOB]: 1 } },
      { name: 'edit v4 delivered again', change: edit(4, bob.id), entries: { [CATALOGUE]: 1, [BOB]: 1 } },
      { name: 'edit v5', change: edit(5, bob.id), entries: { [CATALOGUE]: 1, [BOB]: 1 } },
      { name: 'edit v6, bob\'s append failing', change: edit(6, bob.id), failing: appendTo(BOB), entries: { [CATALOGUE]: 1 } },
      { name: 'event deleted (finishes v6 first)', change: { type: 'event.deleted', version: 7, event_id: 'evt_a' }, entries: { [CATALOGUE]: 2, [BOB]: 2 } },
    ]);
  }, 30_000);

  it('a hide, edits while hidden, then the deletion: the catalogue and the host hear of the hide once', async () => {
    await run([
      { name: 'edit v2', change: edit(2, ann.id), entries: { [CATALOGUE]: 1, [ANN]: 1 } },
      { name: 'hidden (private)', change: edit(3, ann.id, { visibility: 'private' }), entries: { [CATALOGUE]: 1, [ANN]: 1 } },
      { name: 'edit v4 while hidden', change: edit(4, ann.id, { visibility: 'private' }), entries: {} },
      { name: 'edit v5 while hidden', change: edit(5, ann.id, { visibility: 'private' }), entries: {} },
      { name: 'event deleted', change: { type: 'event.deleted', version: 6, event_id: 'evt_a' }, entries: {} },
    ]);
  }, 30_000);
});
