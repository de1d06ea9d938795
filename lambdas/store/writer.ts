/**
 * The full load: a whole dataset → table items. Sources, links and derived
 * items all come from derive.ts, the derivation every change goes through too
 * (applier.ts), so a loaded table and a table kept current by changes hold the
 * same read model (PRODUCT P13, P14). Records loaded from a dataset have
 * version 0.
 */
import { hashApiKey, keyIdFromHash } from '../core/api-key.js';
import { SCOPES, type Dataset } from '../core/dataset.js';
import { deriveEventAggregate, eventSourceItem, isPubliclyVisible, rsvpRecord, rsvpSourceItem, userEventLink, userItem, userRecord } from './derive.js';
import type { ApiKeyItem, DerivedItem, KeyCounterItem, KeyPointerItem, KeyRecordItem, RsvpRecord, TableItem, UserRecord } from './items.js';
import { keys } from './table.js';
import { tallyItems } from './tally.js';

export interface WriteSummary {
  users: number;
  events: { public: number; hidden: number };
  rsvps: { linked: number; anonymous: number };
  profileEntries: number;
  apiKeys: number;
  items: number;
}

/** The read model of a dataset's users, events and RSVPs (no keys). */
export function readModelItems(dataset: Pick<Dataset, 'users' | 'events' | 'rsvps'>): { items: TableItem[]; summary: Omit<WriteSummary, 'apiKeys' | 'items'> } {
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
    items.push(eventSourceItem(event, 0));
    for (const rsvp of rsvps) items.push(rsvpSourceItem(rsvp, 0));
    // One link per user and event, however many ways the user is related to it.
    for (const userId of new Set([event.creator_id, ...rsvps.map((r) => r.user_id)])) items.push(userEventLink(userId, event.id));
    const derived = deriveEventAggregate({ event, creator: users.get(event.creator_id), rsvps, users });
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

/** Keys seeded from a dataset (local and test use). */
export function apiKeyItems(dataset: Pick<Dataset, 'api_keys'>): TableItem[] {
  const items: TableItem[] = [];
  // Seeded keys get the same records as keys made by the key manager, so they
  // are listed, revocable and counted against the 10-active-keys limit.
  const activeKeys = new Map<string, number>();
  for (const apiKey of dataset.api_keys ?? []) {
    const keyHash = hashApiKey(apiKey.key);
    const keyId = keyIdFromHash(keyHash);
    const scopes = [...(apiKey.scopes ?? SCOPES)];
    const revoked = apiKey.revoked ?? false;
    const item: ApiKeyItem = { type: 'API_KEY', key_id: keyId, user_id: apiKey.user_id, name: apiKey.name, scopes, revoked };
    const record: KeyRecordItem = {
      type: 'KEY_RECORD',
      key_id: keyId,
      key_hash: keyHash,
      user_id: apiKey.user_id,
      name: apiKey.name,
      scopes,
      created_at: null,
      revoked,
    };
    const pointer: KeyPointerItem = { type: 'KEY_POINTER', key_id: keyId, user_id: apiKey.user_id };
    items.push({ ...keys.apiKey(keyHash), ...item }, { ...keys.keyRecord(apiKey.user_id, keyId), ...record }, { ...keys.keyPointer(keyId), ...pointer });
    if (!revoked) activeKeys.set(apiKey.user_id, (activeKeys.get(apiKey.user_id) ?? 0) + 1);
  }
  for (const [userId, active] of activeKeys) {
    const counter: KeyCounterItem = { type: 'KEY_COUNTER', user_id: userId, active };
    items.push({ ...keys.keyCounter(userId), ...counter });
  }

  return items;
}
