/**
 * Helpers of the changes-feed review's tests (test/integration/feed-*.test.ts):
 * small datasets, a catalogue follower that keeps its cursor, and what the
 * read routes show now to compare it with.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Dataset, SourceEvent, SourceUser } from '../../lambdas/core/dataset.js';
import { catalogueChanges, type EventChange, type FeedPage } from '../../lambdas/core/feeds.js';
import { parseCursor, type SealedCursor } from '../../lambdas/core/feed-cursor.js';
import type { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { scanTable } from '../../local/resync.js';
import { INDEXES, eventIndexEntryKind } from '../../lambdas/store/table/table.js';
import { feedContext } from './feed-keys.js';

export const NOW = new Date('2026-11-21T12:00:00.000Z');
export const SITE = 'https://s.example';

export function user(id: string, username: string): SourceUser {
  return { id, username, name: `Name ${id}`, image: null, verification_status: null, email: `PRIVATE-${id}@example.com`, phone: null };
}
export function event(id: string, creatorId: string, title: string, extra: Partial<SourceEvent> = {}): SourceEvent {
  return {
    id,
    creator_id: creatorId,
    title,
    description: null,
    cover: null,
    location: null,
    start_date: '2026-12-01T18:00:00.000Z',
    end_date: null,
    timezone: 'Europe/Berlin',
    status: 'published',
    visibility: 'public',
    cost: null,
    created_at: '2026-10-01T00:00:00.000Z',
    ...extra,
  } as SourceEvent;
}
export const dataset = (users: SourceUser[], events: SourceEvent[]): Dataset => ({ users, events, rsvps: [] });

/** A catalogue follower: applies upsert = store, removed = drop, keeps its cursor; a 410 starts it again. */
export class CatalogueReplica {
  readonly copy = new Map<string, Record<string, unknown>>();
  cursor: SealedCursor | undefined;
  readonly log: EventChange[] = [];
  restarts = 0;
  constructor(
    private readonly repo: DynamoRepository,
    private readonly now: () => Date = () => NOW,
    private readonly limit = 100,
  ) {}

  async drain(): Promise<void> {
    for (let more = true, pages = 0; more; pages++) {
      if (pages > 1_000) throw new Error('catalogue: no end after 1,000 pages');
      let page: FeedPage<EventChange>;
      try {
        page = await catalogueChanges(feedContext(this.repo, this.now()), { cursor: this.cursor, limit: this.limit }, SITE);
      } catch (error) {
        if ((error as { statusCode?: number }).statusCode !== 410) throw error;
        // Further behind than the feed keeps: start again, keeping only what the start shows.
        this.cursor = undefined;
        this.restarts++;
        this.copy.clear();
        continue;
      }
      for (const c of page.changes) {
        this.log.push(c);
        if (c.change === 'upserted') this.copy.set(c.id, c.event as unknown as Record<string, unknown>);
        else this.copy.delete(c.id);
      }
      this.cursor = parseCursor(page.next_cursor)!;
      more = page.has_more;
    }
  }

  titles(): Record<string, string> {
    return Object.fromEntries([...this.copy].map(([id, e]) => [id, String(e.title)]).sort());
  }
}

/** What the read routes show now: every public event item (event-index), by id → title. */
export async function publicTitles(client: DynamoDBDocumentClient, table: string): Promise<Record<string, string>> {
  const out: [string, string][] = [];
  for (const item of await scanTable(client, table, INDEXES.event.name)) if (eventIndexEntryKind(item) === 'EVENT') out.push([String(item.event_id), String(item.title)]);
  return Object.fromEntries(out.sort());
}

/** The items of one feed (heads, chunks, and its member list's partition), for messages. */
export async function feedItems(client: DynamoDBDocumentClient, table: string, scope: string): Promise<Record<string, unknown>[]> {
  const of = async (pk: string) => (await client.send(new QueryCommand({ TableName: table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true }))).Items ?? [];
  return [...(await of(`FEED#${scope}`)), ...(await of(`FEED#M#${scope}`))];
}
