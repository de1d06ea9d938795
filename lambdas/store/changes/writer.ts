/**
 * The full load: a whole dataset → table items. Sources, links and derived
 * items all come from derive.ts, the derivation every change goes through too
 * (applier.ts), so a loaded table and a table kept current by changes hold the
 * same read model (PRODUCT P13, P14). Records loaded from a dataset have
 * version 0.
 */
import { hashApiKey, keyIdFromHash } from '../../core/api-key.js';
import { SCOPES, type Dataset } from '../../core/dataset.js';
import { deriveEventAggregate, eventSourceItem, guestShardsRecord, isPubliclyVisible, rsvpRecord, rsvpSourceItem, userEventLink, userItem, userRecord } from './derive.js';
import type { ApiKeyItem, CalendarRevision, DerivedItem, KeyCounterItem, KeyRecordItem, RsvpRecord, TableItem, UserRecord } from '../table/items.js';
import { keys } from '../table/table.js';
import { tallyItems } from '../table/tally.js';

export interface WriteSummary {
  users: number;
  events: { public: number; hidden: number };
  rsvps: { linked: number; anonymous: number };
  profileEntries: number;
  apiKeys: number;
  items: number;
}

/**
 * The read model of a dataset's users, events and RSVPs (no keys). A load has
 * no calendar history (SEQUENCE 0); a resync passes the one it keeps or counts
 * for each event (`revisions`, by event id: local/resync.ts).
 */
export function readModelItems(dataset: Pick<Dataset, 'users' | 'events' | 'rsvps'>, revisions: ReadonlyMap<string, CalendarRevision> = new Map()): { items: TableItem[]; summary: Omit<WriteSummary, 'apiKeys' | 'items'> } {
  const users = new Map<string, UserRecord>(dataset.users.map((u) => [u.id, userRecord(u)]));
  const rsvpsByEvent = new Map<string, RsvpRecord[]>();
  let anonymous = 0;
  for (const rsvp of dataset.rsvps ?? []) {
    // Anonymous guests are never returned or counted: nothing is stored for them.
    if (rsvp.user_id == null) {
      anonymous++;
      continue;
    }
    const list = rsvpsByEvent.get(rsvp.event_id) ?? [];
    list.push(rsvpRecord({ ...rsvp, user_id: rsvp.user_id }));
    rsvpsByEvent.set(rsvp.event_id, list);
  }

  const items: TableItem[] = [];
  const derivedItems: TableItem[] = [];
  const summary = { users: users.size, events: { public: 0, hidden: 0 }, rsvps: { linked: 0, anonymous }, profileEntries: 0 };
  for (const user of users.values()) items.push(userItem(user, 0));
  for (const event of dataset.events) {
    const rsvps = rsvpsByEvent.get(event.id) ?? [];
    const sources = rsvps.map((rsvp) => rsvpSourceItem(rsvp, 0));
    const revision = revisions.get(event.id);
    const derived = deriveEventAggregate({ event, creator: users.get(event.creator_id), rsvps, users, revision });
    // The record of the guest shards the event's sources and derived items are in (the loader writes records first).
    items.push(eventSourceItem(event, 0, revision), ...guestShardsRecord(event.id, [...sources, ...derived]), ...sources);
    // One link per user and event, however many ways the user is related to it.
    for (const userId of new Set([event.creator_id, ...rsvps.map((r) => r.user_id)])) items.push(userEventLink(userId, event.id));
    items.push(...derived);
    derivedItems.push(...derived);
    summary.events[isPubliclyVisible(event) ? 'public' : 'hidden']++;
    summary.rsvps.linked += derived.filter((i) => i.type === 'RSVP').length;
    summary.profileEntries += derived.filter((i) => i.type === 'PROFILE_ENTRY').length;
  }
  // The lists' tally entries and their day, month and year counts (tally.ts).
  items.push(...tallyItems(derivedItems));
  return { items, summary };
}

/**
 * Items for a dataset that has passed `validateDataset` (references resolve).
 * Deterministic: the same dataset always gives the same items in the same order.
 */
export function datasetToItems(dataset: Dataset): { items: TableItem[]; summary: WriteSummary } {
  const readModel = readModelItems(dataset);
  // The changes feeds' items are the loader's (local/loader.ts): they depend on what the table's feeds hold already.
  const items = [...readModel.items, ...apiKeyItems(dataset)];
  return { items, summary: { ...readModel.summary, apiKeys: dataset.api_keys?.length ?? 0, items: items.length } };
}

/** When seeded keys' slots count as taken (they have no creation time): long ago, so a reconcile checks them once. */
export const SEEDED_SLOT_AT = '1970-01-01T00:00:00.000Z';

/** Keys seeded from a dataset (local and test use). */
export function apiKeyItems(dataset: Pick<Dataset, 'api_keys'>): TableItem[] {
  const items: TableItem[] = [];
  // Seeded keys get the same records as keys made by the key manager, so they
  // are listed, revocable and hold slots against the 10-active-keys limit.
  const holders = new Map<string, Record<string, string>>();
  for (const apiKey of dataset.api_keys ?? []) {
    const keyHash = hashApiKey(apiKey.key);
    const keyId = keyIdFromHash(keyHash);
    const scopes = [...(apiKey.scopes ?? SCOPES)];
    const common = { type: 'API_KEY' as const, key_id: keyId, user_id: apiKey.user_id, name: apiKey.name, scopes };
    const item: ApiKeyItem = apiKey.revoked ? { ...common, revoked: true } : { ...common, revoked: false };
    const record: KeyRecordItem = {
      type: 'KEY_RECORD',
      key_id: keyId,
      key_hash: keyHash,
      user_id: apiKey.user_id,
      name: apiKey.name,
      scopes,
      created_at: null,
      revoked: apiKey.revoked ?? false,
      ...(apiKey.revoked ? {} : { confirmed: true as const }),
    };
    items.push({ ...keys.apiKey(keyHash), ...item }, { ...keys.keyRecord(apiKey.user_id, keyId), ...record });
    if (!apiKey.revoked) holders.set(apiKey.user_id, { ...holders.get(apiKey.user_id), [keyId]: SEEDED_SLOT_AT });
  }
  for (const [userId, held] of holders) {
    const counter: KeyCounterItem = { type: 'KEY_COUNTER', user_id: userId, active: Object.keys(held).length, holders: held, rev: 0 };
    items.push({ ...keys.keyCounter(userId), ...counter });
  }
  return items;
}
