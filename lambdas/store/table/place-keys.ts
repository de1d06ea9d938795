/**
 * Discovery's index keys (PRODUCT P17, docs/data-model.md "Discovery"): a
 * place query's index, its sharded partitions and the local-start sort key.
 */
import { placeName, type PlaceKey } from '../../core/place.js';
import { fnv1a } from './fnv1a.js';
import { INDEXES, type IndexDefinition } from './indexes.js';

/**
 * The shards of each place query's partition: an event is in shard
 * FNV-1a(id) mod PLACE_SHARDS, so a load or resync of 100,000 events in one
 * city spreads its index writes over eight partitions per index (about 500
 * write units a second each at the loader's documented pace, and never two
 * in one call: docs/data-model.md, "Partitions under a load"; four were
 * about 990), and a page reads the eight at once, one round trip.
 *
 * Part of every place key: changing it moves every entry (`npm run
 * data:rederive` moves the stored ones).
 */
export const PLACE_SHARDS = 8;

/** The place shard of an event (0 to PLACE_SHARDS - 1). */
export function placeShard(eventId: string): number {
  return fnv1a(eventId) % PLACE_SHARDS;
}

/** The index that answers a place query: both parts, the country alone, or the city alone. */
export function placeIndexOf(query: PlaceKey): IndexDefinition {
  if (query.country !== undefined && query.city !== undefined) return INDEXES.place;
  return query.country !== undefined ? INDEXES.country : INDEXES.city;
}

/** The partition of one shard of a place query (placeName escapes the parts). */
export function placePartition(query: PlaceKey, shard: number): string {
  return `PLACE#${placeName(query)}#${shard}`;
}

/** Every shard's partition of a place query, in order. */
export function placePartitions(query: PlaceKey): string[] {
  return Array.from({ length: PLACE_SHARDS }, (_, shard) => placePartition(query, shard));
}

/**
 * A place index entry's sort key: the event's local start date-time
 * (`YYYY-MM-DDTHH:mm:ss`, fixed width) then its id, so key order is the
 * order discovery answers in (PRODUCT P17).
 */
export function placeSortKey(localStart: string, eventId: string): string {
  return `${localStart}#${eventId}`;
}

/**
 * Sort-key bounds of a window of local dates (inclusive `YYYY-MM-DD`): a
 * bare date sorts before every date-time of that day, and `T~` after every
 * one (`~` is above every digit).
 */
export const placeSortBounds = (from: string, to: string) => ({ lower: from, upper: `${to}T~` });
