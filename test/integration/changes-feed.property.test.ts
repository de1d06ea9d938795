/**
 * The rule of PRODUCT P16, held with random change streams (the change-stream
 * generator) on the real table: a consumer follows every feed (the catalogue,
 * each user's events, each event's guests) while the changes are applied, its
 * reads landing between the appliers' DynamoDB calls, with appliers that die
 * after any call and the redelivery. Every change the consumer sees is either
 * an upsert with content from the moment of the answer or a bare `removed`;
 * no id that was never public appears; no private field ever does. Once the
 * write side is quiet and each feed is read to `has_more: false`, each replica
 * equals its scope's read model, and a consumer starting from no cursor gets
 * the same contents as upserts, each id once.
 *
 * FEED_RUNS=200 runs more cases than the default.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Change } from '../../lambdas/core/changes.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import { applyChange, initialState, type FoldState } from '../../lambdas/core/fold.js';
import { catalogueChanges, guestChanges, hostChanges, type FeedPage } from '../../lambdas/core/feeds.js';
import { decodeCursor, type FeedCursor } from '../../lambdas/core/feed-cursor.js';
import { toGuest, toPublicEvent } from '../../lambdas/core/event-mapper.js';
import { ChangeApplier } from '../../lambdas/store/applier.js';
import { createDocumentClient } from '../../lambdas/store/client.js';
import { isPubliclyVisible } from '../../lambdas/store/derive.js';
import type { EventItem, RsvpItem } from '../../lambdas/store/items.js';
import { DynamoRepository } from '../../lambdas/store/repository.js';
import { INDEXES } from '../../lambdas/store/table.js';
import { PRIVATE_MARKER, historyArb, type History } from '../support/change-streams.js';
import { scanAll } from '../support/read-model.js';
import { useFileStore } from '../support/store.js';
import { Turns } from '../support/turns.js';
import { fold } from '../../lambdas/core/fold.js';

const RUNS = Number(process.env.FEED_RUNS ?? 15);
// About a second a run here; room for a machine shared with other work.
const TIMEOUT = 60_000 + RUNS * 6_000;
const NOW = new Date('2026-11-21T12:00:00.000Z');
const clock = fixedClock(NOW.toISOString());
const SITE = 'https://s.example';
const store = useFileStore();

type Content = Record<string, unknown>;
type Change_ = { id: string; change: 'upserted' | 'removed'; event?: Content; guest?: Content };

/** A consumer of every feed of one table: replicas by scope, cursors by scope. */
class Consumer {
  readonly replicas = new Map<string, Map<string, Content>>();
  private readonly cursors = new Map<string, string>();
  /** Ids seen per scope kind, to check against what was ever public. */
  readonly seen: { events: Set<string>; guests: Set<string> } = { events: new Set(), guests: new Set() };

  constructor(
    private readonly repo: DynamoRepository,
    private readonly scopes: () => Promise<{ users: Map<string, string>; events: string[] }>,
  ) {}

  /** One page of every feed (a feed whose route answers 404 or 400 now is left for later). */
  async poll(): Promise<boolean> {
    const { users, events } = await this.scopes();
    let more = false;
    more = (await this.read('catalogue', (cursor) => catalogueChanges(this.repo, { cursor, limit: 3 }, NOW, SITE))) || more;
    for (const [userId, username] of users) {
      more = (await this.read(`host:${userId}`, (cursor) => hostChanges(this.repo, { cursor, limit: 3, username, variant: 'typed' }, NOW, SITE))) || more;
    }
    for (const eventId of events) more = (await this.read(`guests:${eventId}`, (cursor) => guestChanges(this.repo, this.repo, { cursor, limit: 3, eventId }, NOW))) || more;
    return more;
  }

  async drain(): Promise<void> {
    for (let i = 0; i < 500 && (await this.poll()); i++);
  }

  private async read(scope: string, page: (cursor: FeedCursor | undefined) => Promise<FeedPage<Change_>>): Promise<boolean> {
    const saved = this.cursors.get(scope);
    let answer: FeedPage<Change_>;
    try {
      answer = await page(saved === undefined ? undefined : decodeCursor(saved)!);
    } catch (error) {
      // The read route's own answer for a user renamed away or an event not public now: try again later.
      if ([400, 404].includes((error as { statusCode?: number }).statusCode ?? 0)) return false;
      throw error;
    }
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
    }
    this.cursors.set(scope, answer.next_cursor);
    return answer.has_more;
  }
}

/** Each scope's read model now, from the indexes: what the read routes show. */
async function expectedScopes(table: string): Promise<Map<string, Map<string, Content>>> {
  const out = new Map<string, Map<string, Content>>();
  const add = (scope: string, id: string, content: Content) => {
    const m = out.get(scope) ?? new Map<string, Content>();
    m.set(id, content);
    out.set(scope, m);
  };
  for (const item of await scanAll(store.client, table, INDEXES.event.name)) {
    if (item.type === 'EVENT') {
      const event = toPublicEvent(item as unknown as EventItem, SITE);
      add('catalogue', event.id, event);
      add(`host:${event.creator.id}`, event.id, event);
    }
    if (item.type === 'RSVP') add(`guests:${String(item.event_id)}`, (item.guest as { id: string }).id, toGuest(item as unknown as RsvpItem));
  }
  return out;
}

/** Ever public, over every state the fold passed through. */
function trackPublic(state: FoldState, ever: { events: Set<string>; guests: Set<string> }): void {
  for (const [id, v] of state.events) if (v.record && isPubliclyVisible(v.record)) ever.events.add(id);
  for (const v of state.rsvps.values()) {
    const event = state.events.get(v.record?.event_id ?? '')?.record;
    if (v.record && event && isPubliclyVisible(event) && state.users.get(v.record.user_id)?.record) ever.guests.add(`${v.record.event_id}\u0000${v.record.user_id}`);
  }
}

const loadedTable = (h: History): Promise<string> => store.loaded('feed', h.d0);

/** The scopes a consumer follows: every user id the stream mentions (by their name now) and every event. */
function scopesOf(table: string, h: History) {
  const userIds = new Set([...h.d0.users.map((u) => u.id), ...h.made.flatMap((c) => ('user' in c ? [c.user.id] : []))]);
  const eventIds = [...new Set([...h.d0.events.map((e) => e.id), ...h.made.flatMap((c) => ('event' in c ? [c.event.id] : []))])];
  return async () => {
    const users = new Map<string, string>();
    for (const item of await scanAll(store.client, table)) if (item.type === 'USER' && !item.deleted && userIds.has(String(item.user_id))) users.set(String(item.user_id), String((item.user as { username: string }).username));
    return { users, events: eventIds };
  };
}

/** Applies a change with a store.client that lets the consumer read after every `every`-th call, and dies after call `crashAfter` (0: never). */
async function applyObserved(table: string, change: Change, every: number, crashAfter: number, consumer: Consumer): Promise<void> {
  const observed = createDocumentClient({ endpoint: store.endpoint });
  let calls = 0;
  observed.middlewareStack.add(
    (next) => async (args) => {
      const out = await next(args);
      calls++;
      if (calls % every === 0) await consumer.poll();
      if (calls === crashAfter) throw new Error('crash');
      return out;
    },
    { step: 'initialize', name: 'observe' },
  );
  try {
    await new ChangeApplier(observed, table, { clock, writeConcurrency: 1, fanOutConcurrency: 1 }).apply(change);
  } catch (error) {
    if ((error as Error).message !== 'crash') throw error;
  } finally {
    observed.destroy();
  }
}

describe('changes feeds: a replica kept by the feeds equals the read routes (fast-check, PRODUCT P16)', () => {
  it('read while changes apply, with crashes and redeliveries: content only as shown, removed bare, never-public ids never, replica = read model', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb({ maxSteps: 8 }), fc.array(fc.nat(60), { minLength: 8, maxLength: 8 }), fc.integer({ min: 3, max: 12 }), async (h, crashAt, every) => {
        const table = await loadedTable(h);
        const repo = new DynamoRepository(store.client, table);
        const consumer = new Consumer(repo, scopesOf(table, h));
        const ever = { events: new Set<string>(), guests: new Set<string>() };
        const state = initialState(h.d0);
        trackPublic(state, ever);
        await consumer.poll();
        for (const [i, change] of h.delivered.entries()) {
          applyChange(state, change);
          trackPublic(state, ever);
          // Odd changes die after a random call, then are redelivered; every change is read during its application.
          await applyObserved(table, change, every, i % 2 ? crashAt[i % crashAt.length]! + 1 : 0, consumer);
          await applyObserved(table, change, every, 0, consumer);
        }
        for (const id of consumer.seen.events) expect({ id, everPublic: ever.events.has(id) }).toEqual({ id, everPublic: true });
        for (const id of consumer.seen.guests) expect({ id, everPublic: ever.guests.has(id) }).toEqual({ id, everPublic: true });

        await consumer.drain();
        const expected = await expectedScopes(table);
        const publicEvents = new Set(expected.get('catalogue')?.keys() ?? []);
        const liveUsers = (await scopesOf(table, h)()).users;
        for (const [scope, replica] of consumer.replicas) {
          // A guest feed is compared while its event is public, a host's while the user exists: otherwise the read
          // route answers 404 (or 400) and so does the feed, which a consumer then cannot follow.
          if (scope.startsWith('guests:') && !publicEvents.has(scope.slice(7))) continue;
          if (scope.startsWith('host:') && !liveUsers.has(scope.slice(5))) continue;
          expect({ scope, members: Object.fromEntries(replica) }).toEqual({ scope, members: Object.fromEntries(expected.get(scope) ?? new Map()) });
        }
        for (const scope of expected.keys()) if (!scope.startsWith('host:')) expect(consumer.replicas.has(scope)).toBe(true);

        // A consumer from no cursor: upserts only, each id once, the same contents.
        const fresh = new Consumer(repo, scopesOf(table, h));
        const pages: Change_[] = [];
        let cursor: FeedCursor | undefined;
        for (let more = true; more; ) {
          const answer = await catalogueChanges(repo, { cursor, limit: 2 }, NOW, SITE);
          pages.push(...answer.changes);
          cursor = decodeCursor(answer.next_cursor)!;
          more = answer.has_more;
        }
        expect(pages.every((c) => c.change === 'upserted')).toBe(true);
        expect(pages.map((c) => c.id).sort()).toEqual([...publicEvents].sort());
        await fresh.drain();
        expect(Object.fromEntries(fresh.replicas.get('catalogue') ?? new Map())).toEqual(Object.fromEntries(expected.get('catalogue') ?? new Map()));
        // Nothing owes a feed entry once the write side is quiet.
        for (const item of await scanAll(store.client, table)) expect(item.feed_pending).toBeUndefined();
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);

  it('two appliers applying the same stream at once, call by call in a generated order, while the consumer reads inside their turns: replica = read model', async () => {
    await fc.assert(
      fc.asyncProperty(
        historyArb({ maxSteps: 6 }),
        fc.array(fc.record({ who: fc.nat(1), calls: fc.integer({ min: 1, max: 24 }) }), { maxLength: 10 }).map((bursts) => bursts.flatMap((b) => Array.from({ length: b.calls }, () => b.who))),
        fc.integer({ min: 3, max: 12 }),
        async (h, order, every) => {
          // Changes that would wait for a reference depend on order by definition (P14); the rest must not.
          const sequential = fold(h.d0, h.delivered);
          const stream = h.delivered.filter((_, i) => sequential.outcomes[i]!.result !== 'waiting');
          const table = await loadedTable(h);
          const repo = new DynamoRepository(store.client, table);
          const consumer = new Consumer(repo, scopesOf(table, h));
          await consumer.poll();
          const turns = new Turns(order, 2);
          const clients = [0, 1].map((i) => turns.gate(i, createDocumentClient({ endpoint: store.endpoint })));
          let calls = 0;
          // Inside applier 0's turn (added after the gate): the consumer reads between two calls of the appliers.
          clients[0]!.middlewareStack.add(
            (next) => async (args) => {
              if (++calls % every === 0) await consumer.poll();
              return next(args);
            },
            { step: 'initialize', name: 'consumer' },
          );
          try {
            await Promise.all([0, 1].map((i) => turns.run(i, async () => {
              const applier = new ChangeApplier(clients[i]!, table, { clock, writeConcurrency: 1, fanOutConcurrency: 1 });
              for (const change of stream) await applier.apply(change);
            })));
          } finally {
            for (const c of clients) c.destroy();
          }
          await consumer.drain();
          const expected = await expectedScopes(table);
          const publicEvents = new Set(expected.get('catalogue')?.keys() ?? []);
          const liveUsers = (await scopesOf(table, h)()).users;
          for (const [scope, replica] of consumer.replicas) {
            if (scope.startsWith('guests:') && !publicEvents.has(scope.slice(7))) continue;
            if (scope.startsWith('host:') && !liveUsers.has(scope.slice(5))) continue;
            expect({ scope, members: Object.fromEntries(replica) }).toEqual({ scope, members: Object.fromEntries(expected.get(scope) ?? new Map()) });
          }
        },
      ),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  }, TIMEOUT);
});
