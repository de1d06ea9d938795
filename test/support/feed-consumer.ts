/**
 * A consumer of every changes feed of one table (PRODUCT P16), as the feed
 * property tests drive one: replicas and cursors by scope, every answer
 * checked as it arrives (no private field, `removed` bare), and each scope's
 * read model now to compare the replicas with.
 */
import { expect } from '@jest/globals';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { partitionOf } from './throttle-window.js';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { catalogueChanges, guestChanges, hostChanges, placeChanges, type FeedContext, type FeedPage } from '../../lambdas/core/feeds.js';
import { cityKey, countryKey, placeName, placeOf, placeQueriesOf, type PlaceKey } from '../../lambdas/core/place.js';
import { parseCursor, type SealedCursor } from '../../lambdas/core/feed-cursor.js';
import { feedContext } from './feed-keys.js';
import { toGuest, toPublicEvent } from '../../lambdas/core/event-mapper.js';
import type { EventItem, RsvpItem } from '../../lambdas/store/table/items.js';
import type { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { INDEXES, eventIndexEntryKind } from '../../lambdas/store/table/table.js';
import { PRIVATE_MARKER } from './change-streams.js';
import { scanAll } from './read-model.js';

export const FEED_NOW = new Date('2026-11-21T12:00:00.000Z');
export const FEED_SITE = 'https://s.example';

export type Content = Record<string, unknown>;
export type FeedChange = { id: string; change: 'upserted' | 'removed'; event?: Content; guest?: Content };
/** A place as a consumer asks for it: a city, a country or both, in any spelling the route accepts. */
export type PlaceQuery = { city?: string; country?: string };
/** The scopes to follow now: users by id (with their name now), event ids, and places. */
export type ScopeList = () => Promise<{ users: Map<string, string>; events: string[]; places?: readonly PlaceQuery[] }>;
/** The feed's function a page is read through: each feed is its own Lambda function, with its own containers and keys. */
export type FeedFunction = 'catalogue' | 'host' | 'guests' | 'place';

/** A place query as the route resolves it (lambdas/core/search-params.ts): its keys. */
export const placeKeyOf = (q: PlaceQuery): PlaceKey => ({ ...(q.country !== undefined ? { country: countryKey(q.country) } : {}), ...(q.city !== undefined ? { city: cityKey(q.city) } : {}) });
/** The replica name of a place's feed: its place name, so that two spellings of one place are one scope. */
export const placeScopeName = (place: PlaceKey): string => `place:${placeName(place)}`;

/**
 * What follows the table beside the consumer and reads when it reads (test/support/webhook-world.ts: webhooks,
 * delivered at each poll), seeing every write of the write side that landed as the table's stream would (`tap`).
 */
export interface Follower {
  poll(): Promise<unknown>;
  tap?(input: Record<string, unknown>): void;
}

export class FeedConsumer {
  /** Read at each poll after the feeds: a consumer's webhooks go on whenever it reads. */
  readonly followers: Follower[] = [];
  readonly replicas = new Map<string, Map<string, Content>>();
  private readonly cursors = new Map<string, string>();
  /** Whether the consumer followed any place (then every place that shows an event must be among them). */
  followsPlaces = false;
  /** Ids seen per scope kind, to check against what was ever public. */
  readonly seen: { events: Set<string>; guests: Set<string>; places: Set<string> } = { events: new Set(), guests: new Set(), places: new Set() };
  /** Starts again after a 410 (an expired chunk behind the cursor). */
  restarts = 0;
  private readonly restarting = new Set<string>();
  /** Every 400 and 404 answered, which the consumer leaves for later: a test where none is legitimate checks this is empty. */
  readonly refused: { scope: string; status: number; message: string }[] = [];

  constructor(
    private readonly repo: DynamoRepository,
    private readonly scopes: ScopeList,
    /** The context of a read (its keys and time); by default the tests' key, at FEED_NOW. */
    private readonly contextOf: (feed: FeedFunction) => FeedContext = () => feedContext(repo, FEED_NOW),
  ) {}

  /** The place whose feed the next poll reads (polls take the places in turn). */
  private placeTurn = 0;

  /**
   * One page of every feed (a feed whose route answers 404 or 400 now is left
   * for later), of places one in turn unless `everyPlace`: a consumer may
   * read a feed at any time, and a poll between every few calls of a change
   * stays as cheap as before the place feeds (the suite's time); drain reads
   * them all.
   */
  async poll(everyPlace = false): Promise<boolean> {
    const { users, events, places = [] } = await this.scopes();
    let more = false;
    more = (await this.read('catalogue', (cursor) => catalogueChanges(this.contextOf('catalogue'), { cursor, limit: 3 }, FEED_SITE))) || more;
    for (const [userId, username] of users) {
      more = (await this.read(`host:${userId}`, (cursor) => hostChanges(this.contextOf('host'), { cursor, limit: 3, username, variant: 'typed' }, FEED_SITE))) || more;
    }
    for (const eventId of events) more = (await this.read(`guests:${eventId}`, (cursor) => guestChanges(this.contextOf('guests'), this.repo, { cursor, limit: 3, eventId }))) || more;
    const turn = places.length ? this.placeTurn++ % places.length : 0;
    for (const query of everyPlace ? places : places.slice(turn, turn + 1)) {
      const place = placeKeyOf(query);
      this.followsPlaces = true;
      more = (await this.read(placeScopeName(place), (cursor) => placeChanges(this.contextOf('place'), { cursor, limit: 3, place }, FEED_SITE))) || more;
    }
    for (const f of this.followers) await f.poll();
    return more;
  }

  async drain(): Promise<void> {
    for (let i = 0; i < 500 && (await this.poll(true)); i++);
  }

  private async read(scope: string, page: (cursor: SealedCursor | undefined) => Promise<FeedPage<FeedChange>>): Promise<boolean> {
    const saved = this.cursors.get(scope);
    let answer: FeedPage<FeedChange>;
    try {
      answer = await page(saved === undefined ? undefined : parseCursor(saved)!);
    } catch (error) {
      const status = (error as { statusCode?: number }).statusCode ?? 0;
      // Further behind than the feed keeps (its chunks expired): start again, and drop what the start does not show.
      if (status === 410) {
        this.cursors.delete(scope);
        this.restarts++;
        this.restarting.add(scope);
        return true;
      }
      // The read route's own answer for a user renamed away or an event not public now: try again later.
      if ([400, 404].includes(status)) {
        this.refused.push({ scope, status, message: (error as Error).message });
        return false;
      }
      throw error;
    }
    // A start again: the replica is rebuilt from the members it lists (then the entries after them).
    if (this.restarting.delete(scope)) this.replicas.set(scope, new Map());
    const replica = this.replicas.get(scope) ?? new Map<string, Content>();
    this.replicas.set(scope, replica);
    for (const c of answer.changes) {
      expect(JSON.stringify(c)).not.toContain(PRIVATE_MARKER);
      if (c.change === 'removed') {
        expect(Object.keys(c).sort()).toEqual(['change', 'id']);
        replica.delete(c.id);
      } else {
        replica.set(c.id, (c.event ?? c.guest)!);
      }
      this.seen[scope.startsWith('guests:') ? 'guests' : 'events'].add(scope.startsWith('guests:') ? `${scope.slice(7)}\u0000${c.id}` : c.id);
      // An id appears in a place's feed only once it was public there (P16: `removed` only where it was shown).
      if (scope.startsWith('place:')) this.seen.places.add(`${scope}\u0000${c.id}`);
    }
    this.cursors.set(scope, answer.next_cursor);
    return answer.has_more;
  }
}

/** The place feeds an event at `location` is shown in while public, by replica name, each with the id: for "ever public there". */
export const placesShowing = (id: string, location: Parameters<typeof placeOf>[0]): string[] => placeQueriesOf(placeOf(location)).map((place) => `${placeScopeName(place)}\u0000${id}`);

/** Each scope's read model now, from the indexes: what the read routes show. */
export async function expectedScopes(client: DynamoDBDocumentClient, table: string): Promise<Map<string, Map<string, Content>>> {
  const out = new Map<string, Map<string, Content>>();
  const add = (scope: string, id: string, content: Content) => {
    const m = out.get(scope) ?? new Map<string, Content>();
    m.set(id, content);
    out.set(scope, m);
  };
  // event-index copies no `type` (lambdas/store/table/indexes.ts): an entry's kind is its sort key, as the reads take it.
  for (const entry of await scanAll(client, table, INDEXES.event.name)) {
    const item: Record<string, unknown> = { ...entry, type: eventIndexEntryKind(entry) };
    if (item.type === 'EVENT') {
      const event = toPublicEvent(item as unknown as EventItem, FEED_SITE);
      add('catalogue', event.id, event);
      add(`host:${event.creator.id}`, event.id, event);
      for (const place of placeQueriesOf(placeOf((item as unknown as EventItem).location))) add(placeScopeName(place), event.id, event);
    }
    if (item.type === 'RSVP') add(`guests:${String(item.event_id)}`, (item.guest as { id: string }).id, toGuest(item as unknown as RsvpItem));
  }
  return out;
}

/** The scopes of these users (by their name now, while they exist), events and places. */
export function scopesOf(client: DynamoDBDocumentClient, table: string, userIds: ReadonlySet<string>, eventIds: readonly string[], places: readonly PlaceQuery[] = []): ScopeList {
  return async () => {
    const users = new Map<string, string>();
    for (const item of await scanAll(client, table)) if (item.type === 'USER' && !item.deleted && userIds.has(String(item.user_id))) users.set(String(item.user_id), String((item.user as { username: string }).username));
    return { users, events: [...eventIds], places };
  };
}

/**
 * Each replica equals its scope's read model: a guest feed while its event is
 * public and a host's while the user exists (otherwise the read route answers
 * 404 or 400 and so does the feed, which a consumer then cannot follow), a
 * place's feed the public events located there now, and every scope that
 * shows anything was followed (places: when the consumer follows any).
 */
export async function expectReplicasMatch(client: DynamoDBDocumentClient, table: string, consumer: FeedConsumer, liveUsers: ReadonlyMap<string, string>): Promise<Map<string, Map<string, Content>>> {
  const expected = await expectedScopes(client, table);
  const publicEvents = new Set(expected.get('catalogue')?.keys() ?? []);
  for (const [scope, replica] of consumer.replicas) {
    if (scope.startsWith('guests:') && !publicEvents.has(scope.slice(7))) continue;
    if (scope.startsWith('host:') && !liveUsers.has(scope.slice(5))) continue;
    expect({ scope, members: Object.fromEntries(replica) }).toEqual({ scope, members: Object.fromEntries(expected.get(scope) ?? new Map()) });
  }
  // A consumer that follows places follows every place that shows an event (the generators' places are few).
  for (const scope of expected.keys()) if (!scope.startsWith('host:') && (consumer.followsPlaces || !scope.startsWith('place:'))) expect({ scope, followed: consumer.replicas.has(scope) }).toEqual({ scope, followed: true });
  return expected;
}

/**
 * How a run of work goes wrong, if it does: it dies right after call n (the
 * call landed), or its n-th write fails without landing, or every call to
 * the partitions `throttled` names fails without landing for the whole run
 * (a fault that lasts: a throttled partition, test/support/throttle-window.ts).
 */
export type Fault = { crashAfter?: number; failAt?: number; throttled?: string };

/**
 * Runs `work` with a client on `endpoint` that lets the consumer read the
 * feeds after every `every`-th DynamoDB call and goes wrong as `fault` says
 * (a failed write throws DynamoDB's throttling error, as one the SDK's
 * retries did not outlast does, up through the code); answers whether the
 * work finished (false: it died or failed).
 */
export async function withObservedClient(endpoint: string, every: number, fault: Fault, consumer: FeedConsumer, work: (client: DynamoDBDocumentClient) => Promise<unknown>): Promise<boolean> {
  const client = createDocumentClient({ endpoint });
  let calls = 0;
  let writes = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (/Put|Update|Delete|BatchWrite/.test(String(context.commandName)) && ++writes === fault.failAt) throw Object.assign(new Error('failed without landing'), { name: 'ThrottlingException' });
      if (fault.throttled !== undefined && partitionOf((args as { input: Record<string, unknown> }).input)?.startsWith(fault.throttled)) {
        throw Object.assign(new Error('throttled (a window)'), { name: 'ThrottlingException' });
      }
      const out = await next(args);
      // Landed (a crash below comes after it): the stream has it.
      for (const f of consumer.followers) f.tap?.((args as { input: Record<string, unknown> }).input);
      calls++;
      if (calls % every === 0) await consumer.poll();
      if (calls === fault.crashAfter) throw new Error('crash');
      return out;
    },
    { step: 'initialize', name: 'observe' },
  );
  try {
    await work(client);
    return true;
  } catch (error) {
    if ((error as Error).message !== 'crash' && (error as Error).name !== 'ThrottlingException') throw error;
    return false;
  } finally {
    client.destroy();
  }
}
