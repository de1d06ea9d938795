/**
 * Webhooks beside a feed property or a schedule exploration (PRODUCT P18):
 * who owns them, which scopes they follow, and the rules held once the write
 * side is quiet: each receiver that applied its deliveries in order equals
 * its scope's read route, and its cursor, taken to the pull feed, continues
 * exactly (test/support/webhook-world.ts does the delivering and the checks
 * at each send).
 */
import { expect } from '@jest/globals';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { hashApiKey, keyIdFromHash } from '../../lambdas/core/api-key.js';
import type { Dataset, SourceEvent } from '../../lambdas/core/dataset.js';
import { batchWriteAll } from '../../lambdas/store/table/batch-write.js';
import { scanAll } from './read-model.js';
import type { FileStore } from './store.js';
import { expectedScopes, placeKeyOf, placeScopeName, type Content, type PlaceQuery } from './feed-consumer.js';
import type { Behaviour, Hook, WebhookWorld } from './webhook-world.js';

/** A consumer with a key of its own, whom no change stream touches: its webhooks live throughout. */
export const HOOKS_OWNER = { id: 'usr_hookowner', username: 'hookowner' };
const OWNER_KEY = 'pk_webhook_owner_key_0123456789abcdefgh';
/** The key a user of the data holds (`withHookOwners`' `alsoKeyOf`): its webhooks die with that user. */
const USER_KEY = 'pk_webhook_user_key_0123456789abcdefghi';
const keyIdOf = (key: string) => keyIdFromHash(hashApiKey(key));
/** The owner's key, as a webhook's create names it. */
export const OWNER = { userId: HOOKS_OWNER.id, keyId: keyIdOf(OWNER_KEY) };

/** The dataset with the webhooks' owner and keys: the consumer's, and one of `alsoKeyOf`'s (a user the changes may delete). */
export function withHookOwners(d0: Dataset, alsoKeyOf?: string): Dataset {
  return {
    ...d0,
    users: [...d0.users, HOOKS_OWNER],
    api_keys: [...(d0.api_keys ?? []), { key: OWNER_KEY, user_id: HOOKS_OWNER.id, name: 'webhooks' }, ...(alsoKeyOf ? [{ key: USER_KEY, user_id: alsoKeyOf, name: 'webhooks of a user' }] : [])],
  };
}

export interface Following {
  /** Users whose events a webhook follows (by id), events whose guests, places. */
  hosts: readonly string[];
  events: readonly string[];
  places: readonly PlaceQuery[];
  /** A user of the data holding a key (withHookOwners' `alsoKeyOf`): one catalogue webhook is theirs. */
  keyHolder?: string;
}

/**
 * One webhook per scope, each start in turn (the catalogue twice: the consumer's, having pulled first and handing
 * its cursor over, and the key holder's, backfilled), each receiver with its script of answers.
 */
export async function followScopes(world: WebhookWorld, f: Following, scripts: readonly (readonly Behaviour[])[] = []): Promise<Hook[]> {
  const owner = OWNER;
  const starts = ['backfill', 'pulled', 'next'] as const;
  let n = 0;
  const made: (Hook | undefined)[] = [];
  const create = async (who: { userId: string; keyId: string }, scope: Parameters<WebhookWorld['create']>[2], name: string) =>
    made.push(await world.create(who.userId, who.keyId, scope, name, starts[n % starts.length]!, scripts[n++] ?? []));
  await create(owner, { type: 'catalogue' }, 'catalogue');
  if (f.keyHolder) await create({ userId: f.keyHolder, keyId: keyIdOf(USER_KEY) }, { type: 'catalogue' }, 'catalogue');
  for (const userId of f.hosts) await create(owner, { type: 'host', userId }, `host:${userId}`);
  for (const q of f.places) await create(owner, { type: 'place', ...(q.city !== undefined ? { city: q.city } : {}), ...(q.country !== undefined ? { country: q.country } : {}) }, placeScopeName(placeKeyOf(q)));
  for (const eventId of f.events) await create(owner, { type: 'guests', eventId }, `guests:${eventId}`);
  return made.filter((h): h is Hook => h !== undefined);
}

/** Whether the scope's feed route answers now, as a pull consumer would find it: a guest list only while its event is public. */
const followable = (hook: Hook, expected: Map<string, Map<string, Content>>): boolean => hook.scope.type !== 'guests' || (expected.get('catalogue')?.has(hook.scope.eventId) ?? false);

/**
 * At a moment the write side is quiet, however far behind each webhook is (retrying, in flight, disabled): its
 * receiver's copy with the pull feed read from its cursor equals the scope's read route (no change skipped).
 */
export async function expectHandovers(world: WebhookWorld, client: DynamoDBDocumentClient, table: string): Promise<void> {
  const expected = await expectedScopes(client, table);
  for (const hook of world.receivers.hooks.values()) {
    if (hook.dead || !followable(hook, expected)) continue;
    const handed = await world.handover(hook);
    if (!handed) continue;
    expect({ hook: hook.name, handedOver: Object.fromEntries(handed.members) }).toEqual({ hook: hook.name, handedOver: Object.fromEntries(expected.get(hook.name) ?? new Map()) });
  }
}

/**
 * Once the write side is quiet and the webhooks have delivered all they will: no rule was broken at any send, each
 * live receiver holds exactly its scope's read route (and so does its idempotent copy, each webhook-id applied once), and a pull from its cursor gives nothing (nothing repeated).
 */
export async function expectReceiversMatch(world: WebhookWorld, client: DynamoDBDocumentClient, table: string): Promise<void> {
  expect(world.receivers.violations.slice(0, 5)).toEqual([]);
  const expected = await expectedScopes(client, table);
  for (const hook of world.receivers.hooks.values()) {
    if (hook.dead || !followable(hook, expected)) continue;
    const want = Object.fromEntries(expected.get(hook.name) ?? new Map());
    expect({ hook: hook.name, holds: Object.fromEntries(hook.replica.members) }).toEqual({ hook: hook.name, holds: want });
    expect({ hook: hook.name, idempotentHolds: Object.fromEntries(hook.firstOnly.members) }).toEqual({ hook: hook.name, idempotentHolds: want });
    const handed = await world.handover(hook);
    if (handed) expect({ hook: hook.name, pulledAfterTheLastDelivery: handed.pulled }).toEqual({ hook: hook.name, pulledAfterTheLastDelivery: 0 });
  }
}

/** A public, published event of the webhook explorations' scenarios: at the turn of the year, in a Lisbon club. */
export const scenarioEvent = (id: string, creator: string, more: Partial<SourceEvent> = {}): SourceEvent => ({
  id,
  creator_id: creator,
  title: `Event ${id}`,
  start_date: '2026-12-31T23:30:00.000Z',
  timezone: 'UTC',
  status: 'published',
  visibility: 'public',
  created_at: '2026-11-01T00:00:00.000Z',
  location: { name: 'Club', city: 'Lisbon', country: null },
  ...more,
});

/**
 * Each scenario's table with the webhooks' owners, emptied and seeded again before each schedule (a table made
 * afresh costs more than the schedule): the answer names the table, ready.
 */
export function seededTables<S extends { d0: Dataset }>(store: FileStore, prefix: string): (scenario: S) => Promise<string> {
  const tables = new Map<S, { name: string; seed: Record<string, unknown>[] }>();
  return async (scenario) => {
    const known = tables.get(scenario);
    if (!known) {
      const name = await store.loaded(prefix, withHookOwners(scenario.d0));
      tables.set(scenario, { name, seed: await scanAll(store.client, name) });
      return name;
    }
    const now = await scanAll(store.client, known.name);
    await batchWriteAll(store.client, known.name, [], {}, now.map((i) => ({ pk: i.pk, sk: i.sk })));
    await batchWriteAll(store.client, known.name, known.seed);
    return known.name;
  };
}
