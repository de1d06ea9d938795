/**
 * Discovery's read (PRODUCT P17, docs/finding-events.md): a place query's
 * page in two round trips, whatever the size of the catalogue or the place.
 *
 * 1. The query's index (place, country or city: placeIndexOf) has
 *    PLACE_SHARDS partitions; each is read at once, keys only, from the
 *    window's first local date (or strictly after the cursor's last sort
 *    key) to its last, `limit + 1` entries each. Merged by sort key, the
 *    first `limit + 1` are the page and whether more follow.
 * 2. The page's event items, by key (BatchGetItem, eventually consistent
 *    like the profile lists'). An item is shown only while it still carries
 *    the very index entry that led to it: a GSI lags its table, so an entry
 *    of an event that has since moved, gone private, been unpublished or
 *    deleted leads to an item that no longer has it, and shows nothing.
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { PlaceSearch, PlaceSearchPage } from '../../core/ports.js';
import type { EventItem } from '../table/items.js';
import { batchGetAll, itemKeyString, type BatchGetOptions } from '../table/batch-get.js';
import { INDEXES, placeIndexOf, placePartitions, placeSortBounds } from '../table/table.js';

type Item = Record<string, unknown>;

/** One index entry as a Query returns it (keys only). */
interface Entry {
  pk: string;
  sk: string;
  indexPk: string;
  indexSk: string;
}

/** `batchGet`: step 2's attempts and backoff (batch-get.ts). */
export async function searchEvents(client: DynamoDBDocumentClient, tableName: string, search: PlaceSearch, batchGet: BatchGetOptions = {}): Promise<PlaceSearchPage> {
  const index = placeIndexOf(search.place);
  const { lower, upper } = placeSortBounds(search.from, search.to);
  // After a cursor the lower bound is its own key, read again and dropped: one entry more per shard at most.
  const start = search.after !== undefined && search.after > lower ? search.after : lower;
  if (start > upper) return { events: [] };
  const want = search.limit + 1 + (start === search.after ? 1 : 0);
  const shards = await Promise.all(
    placePartitions(search.place).map(async (partition) => {
      const out = await client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: index.name,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lower AND :upper',
          ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
          ExpressionAttributeValues: { ':pk': partition, ':lower': start, ':upper': upper },
          Limit: want,
        }),
      );
      return ((out.Items ?? []) as Item[]).map((i): Entry => ({ pk: String(i.pk), sk: String(i.sk), indexPk: String(i[index.partitionKey]), indexSk: String(i[index.sortKey]) }));
    }),
  );
  // Each shard gave its first `want` entries past `start`, so the first `limit + 1` of all shards are among them.
  const merged = shards
    .flat()
    .filter((e) => search.after === undefined || e.indexSk > search.after)
    .sort((a, b) => (a.indexSk < b.indexSk ? -1 : a.indexSk > b.indexSk ? 1 : 0));
  const page = merged.slice(0, search.limit);
  // Keys left unprocessed are sent again with backoff, a bounded number of times; then the page fails (a throttle: 503).
  const items = await batchGetAll(client, tableName, page.map((e) => ({ pk: e.pk, sk: e.sk })), { ...batchGet, consistent: false });
  const events = page.flatMap((entry) => {
    const item = items.get(itemKeyString({ pk: entry.pk, sk: entry.sk }));
    const shown = item?.type === 'EVENT' && item[INDEXES.event.partitionKey] !== undefined && item[index.partitionKey] === entry.indexPk && item[index.sortKey] === entry.indexSk;
    return shown ? [item as unknown as EventItem] : [];
  });
  return merged.length > search.limit ? { events, next: page.at(-1)!.indexSk } : { events };
}
