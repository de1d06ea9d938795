/**
 * Issue 59 d9 (the review's reproducer, adopted), and issue 59 item 5's
 * last sentence: "A page costs … at most two round trips after the
 * authorizer", on every request. In Lambda the route's cursor keys come from
 * Secrets Manager (lambdas/http/cursor-keys.ts): read at a container's first
 * page and again at the first page once the keys held are KEYS_MAX_AGE_MS
 * (5 minutes) old. searchPage (lambdas/core/search-events.ts) asked the
 * keyring before its reads (to open a cursor) or after them (to sign
 * next_cursor), never beside them, and the read of the keys was awaited, so
 * such a page was three round trips in a row: the secret, the four shards'
 * Queries, the BatchGetItem. Every container paid it on its first page and
 * every five minutes after; the local server (a fixed key) never showed it.
 * The feeds shared it.
 *
 * Now the keys are read beside the page's reads (lambdas/core/cursor-reads.ts):
 * a cursor is judged by the keys held when they can (past their age they
 * still can: a replaced key stays accepted), the refresh they are due goes
 * beside the Queries, and signing waits for it; a container's first page,
 * or a cursor of a key newer than those held, reads the page beside the
 * keys and drops it unless they say the cursor is genuine. The review's
 * assertion, that the page's round trips are the Queries and then the
 * BatchGetItem, is kept for the data calls; the secret's calls may now ride
 * inside those round trips (before, they were one of their own), and the
 * page is never more than two. Also held: a container's first page with a
 * cursor and without, a cursor of a key the container does not hold yet,
 * and the same for a changes feed's page.
 *
 * Measured with the real keyring over a Secrets Manager stand-in
 * (test/support/secrets-stub.ts, over HTTP) and the real store read on
 * dynalite: each call's start and end in one sequence, the page's round
 * trips being its runs of calls that overlap.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { everyShardAt, parseCursor, sealCursor, staticKeyring } from '../../lambdas/core/feed-cursor.js';
import { catalogueChanges } from '../../lambdas/core/feeds.js';
import { parseSearchCursor } from '../../lambdas/core/search-cursor.js';
import { searchPage } from '../../lambdas/core/search-events.js';
import { KEYS_MAX_AGE_MS, secretsManagerKeyring } from '../../lambdas/http/cursor-keys.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { placesDataset } from '../support/places.js';
import { useSecretsStub } from '../support/secrets-stub.js';
import { startTestStore, type TestStore } from '../support/store.js';

const secrets = useSecretsStub('discovery-key');
let store: TestStore;
beforeAll(async () => {
  store = await startTestStore(placesDataset());
});
afterAll(async () => store?.close());

type Span = { name: string; start: number; end: number };
let tick = 0;
let spans: Span[] = [];
function recorded<T extends { send: (c: never) => Promise<unknown> }>(client: T, label: (c: unknown) => string): T {
  return {
    send: async (command: unknown) => {
      const span = { name: label(command), start: tick++, end: Infinity };
      spans.push(span);
      try {
        return await client.send(command as never);
      } finally {
        span.end = tick++;
      }
    },
  } as unknown as T;
}
/** Runs of calls that overlap in time: the round trips the page waited for one after another. */
function roundTrips(of: Span[]): string[][] {
  const sorted = [...of].sort((a, b) => a.start - b.start);
  const waves: { end: number; names: string[] }[] = [];
  for (const s of sorted) {
    const last = waves.at(-1);
    if (last && s.start < last.end) {
      last.names.push(s.name);
      last.end = Math.max(last.end, s.end);
    } else waves.push({ end: s.end, names: [s.name] });
  }
  return waves.map((w) => [...new Set(w.names)]);
}

const isSecret = (name: string) => name.startsWith('secret:');
/** The page's round trips: at most two, none of the secret's calls alone, and the data calls' own in order. */
function expectTwoRoundTrips(of: Span[], data: string[][]): void {
  const trips = roundTrips(of);
  expect({ trips: trips.length <= 2 ? 'at most 2' : trips, secretAlone: trips.filter((t) => t.every(isSecret)) }).toEqual({ trips: 'at most 2', secretAlone: [] });
  const dataTrips = trips.map((t) => t.filter((n) => !isSecret(n))).filter((t) => t.length);
  // When the secret's calls outlast the first data call they join its round trip to the next: one run, the data calls in order.
  expect(dataTrips.length === data.length ? dataTrips : [dataTrips.flat()]).toEqual(dataTrips.length === data.length ? data : [data.flat()]);
}

describe('a page in Lambda, its cursor keys from Secrets Manager', () => {
  const query = { place: { city: 'amsterdam' }, from: '2026-08-01', to: '2026-10-31', stated: {}, limit: 2 };
  const setup = (now: () => number) => ({
    keyring: secretsManagerKeyring(secrets.stub.arn, recorded(secrets.client as unknown as SecretsManagerClient, (c) => `secret:${(c as object).constructor.name}`), () => new Date(now())),
    repo: new DynamoRepository(recorded(store.client as unknown as DynamoDBDocumentClient, (c) => (c as object).constructor.name), store.tableName),
  });

  it('is at most two round trips, also once the keys the container holds are five minutes old', async () => {
    let now = Date.parse('2026-11-21T12:00:00.000Z');
    const { keyring, repo } = setup(() => now);

    // A warm container: the keys read a moment ago.
    await keyring.keys();
    spans = [];
    const first = await searchPage({ search: repo, keyring }, query);
    expect(roundTrips(spans)).toEqual([['QueryCommand'], ['BatchGetCommand']]);

    // Five minutes on, the next page of the same walk, in the same container: the keys are read again, beside the Queries.
    now += KEYS_MAX_AGE_MS;
    spans = [];
    await searchPage({ search: repo, keyring }, { ...query, cursor: parseSearchCursor(first.pagination.next_cursor!)! });
    expect(spans.filter((s) => isSecret(s.name)).map((s) => s.name)).toEqual(['secret:DescribeSecretCommand']);
    expectTwoRoundTrips(spans, [['QueryCommand'], ['BatchGetCommand']]);
  });

  it("a container's first page, with a cursor and without: the keys read beside the page", async () => {
    const now = Date.parse('2026-11-21T12:00:00.000Z');
    const signer = staticKeyring(Buffer.from('discovery-key'));
    const given = await searchPage({ search: new DynamoRepository(store.client, store.tableName), keyring: signer }, query);
    for (const cursor of [undefined, parseSearchCursor(given.pagination.next_cursor!)!]) {
      const { keyring, repo } = setup(() => now);
      spans = [];
      const page = await searchPage({ search: repo, keyring }, { ...query, ...(cursor ? { cursor } : {}) });
      expect(page.events.length).toBeGreaterThan(0);
      expect(spans.filter((s) => isSecret(s.name)).map((s) => s.name)).toEqual(['secret:DescribeSecretCommand', 'secret:GetSecretValueCommand']);
      expectTwoRoundTrips(spans, [['QueryCommand'], ['BatchGetCommand']]);
    }
  });

  it('a cursor of a key the container does not hold yet (a rotation since it read them): two round trips, and the page answered', async () => {
    let now = Date.parse('2026-11-21T12:00:00.000Z');
    const { keyring, repo } = setup(() => now);
    await keyring.keys();
    secrets.stub.rotate('discovery-key-two');
    now += 60_000;
    const given = await searchPage({ search: new DynamoRepository(store.client, store.tableName), keyring: staticKeyring(Buffer.from('discovery-key-two')) }, query);
    spans = [];
    const page = await searchPage({ search: repo, keyring }, { ...query, cursor: parseSearchCursor(given.pagination.next_cursor!)! });
    expect(page.events.length).toBeGreaterThan(0);
    expectTwoRoundTrips(spans, [['QueryCommand'], ['BatchGetCommand']]);
  });

  it("the feeds too: a changes feed's page, at a container's first page and once its keys are five minutes old", async () => {
    let now = Date.parse('2026-11-21T12:00:00.000Z');
    const { keyring, repo } = setup(() => now);
    const cursor = parseCursor(await sealCursor({ scope: 'EVENTS', mode: 'entries', position: everyShardAt(0), after: '', asOf: Math.floor(now / 1000) }, staticKeyring(Buffer.from('discovery-key-two'))))!;
    for (const moment of ['first', 'five minutes on']) {
      spans = [];
      const page = await catalogueChanges({ feeds: repo, keyring, now: new Date(now) }, { cursor, limit: 5 }, 'https://site.example');
      expect({ moment, changes: page.changes.length }).toEqual({ moment, changes: 5 });
      expect({ moment, secret: spans.some((s) => isSecret(s.name)) }).toEqual({ moment, secret: true });
      expectTwoRoundTrips(spans, [['QueryCommand'], ['BatchGetCommand']]);
      now += KEYS_MAX_AGE_MS;
    }
  });
});
