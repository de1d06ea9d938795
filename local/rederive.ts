/**
 * Re-derivation (`npm run data:rederive`): every item derived again from the
 * sources the table itself holds, with the code deployed now. What a
 * derivation depends on besides the sources (the place fold, the country
 * table, the time-zone database's rules: lambdas/core/) can change with a
 * deployment; an event's stored items keep what the code that wrote them
 * derived until the event changes again. This brings them up to date: it
 * reads the table's users, events and linked RSVPs (their source items, the
 * records the web product sent), and resyncs the table to that dataset
 * (resync.ts): only items whose derivation differs are rewritten, each
 * appended to the feeds it leaves and joins, the member lists made exact.
 * Versions, tombstones and keys are left as they are (the dataset has no
 * `api_keys`, and every live user is in it). Run it with the ingest paused,
 * like a resync (docs/operations.md).
 */
import type { Dataset, SourceEvent, SourceUser } from '../lambdas/core/dataset.js';
import type { RsvpRecord, UserRecord } from '../lambdas/store/table/items.js';

type Item = Record<string, unknown>;

const live = (item: Item) => item.deleted !== true && item.type !== 'TOMBSTONE';

/** The dataset the table's live source items describe (the read model derives from exactly these). */
export function datasetFromSources(items: readonly Item[]): Dataset {
  const users: SourceUser[] = [];
  const events: SourceEvent[] = [];
  const rsvps: RsvpRecord[] = [];
  for (const item of items) {
    if (!live(item)) continue;
    if (item.type === 'USER' && item.user) users.push(item.user as UserRecord);
    else if (item.type === 'EVENT_SOURCE' && item.event) events.push(item.event as SourceEvent);
    else if (item.type === 'RSVP_SOURCE' && item.rsvp) rsvps.push(item.rsvp as RsvpRecord);
  }
  const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  return { users: users.sort(byId), events: events.sort(byId), rsvps, api_keys: [] };
}
