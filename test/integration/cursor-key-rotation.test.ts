/**
 * Feed cursors across cursor key rotations (lambdas/http/cursor-keys.ts,
 * lambdas/core/feed-cursor.ts, lambdas/core/feeds.ts openFor), read from a
 * Secrets Manager stand-in through the real SDK secrets.client, time moved by an
 * injected clock.
 *
 * A review found two defects, kept below as the tests it wrote:
 * 1. A function signed with the key that was current when it read the
 *    secret, for as long as it lived: it read the secret again only when a
 *    cursor matched none of its keys. One that started between the staging
 *    and the promotion of a new key accepted that key already, so no cursor
 *    ever made it read again: it signed with the replaced key for its whole
 *    life, and once the next rotation retired that key, cursors it gave
 *    within their 30 days answered 400.
 * 2. A cursor past its 30 days signed with a key since retired answered 400
 *    ("Invalid cursor"), not 410: the MAC was checked before the age, and
 *    the cursor named no key. The client reports only a 410 as
 *    CursorExpiredError, and client/examples/keep-in-sync.ts rethrows
 *    anything else, so a mirror away for two rotations never started again.
 *
 * Now the keys are read again on a schedule, a failed read is backed off
 * and leaves the keys held in use, the age is checked before the MAC, and a
 * consumer following every feed through two rotations, through functions
 * started at every awkward moment, never meets a 400 and ends equal to the
 * read routes.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Change } from '../../lambdas/core/changes.js';
import type { Clock } from '../../lambdas/core/clock.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { ValidationError } from '../../lambdas/core/errors.js';
import { CURSOR_LIFETIME_SECONDS, encodeCursor, openCursor, parseCursor, sealCursor, staticKeyring, type CursorKeyring, type CursorKeys, type FeedCursor, everyShardAt } from '../../lambdas/core/feed-cursor.js';
import { catalogueChanges, CursorExpiredError, type FeedContext } from '../../lambdas/core/feeds.js';
import type { FeedReader } from '../../lambdas/core/ports.js';
import { errorResponse } from '../../lambdas/http/envelope.js';
import { silentLogger } from '../../lambdas/http/logger.js';
import { KEYS_MAX_AGE_MS, REFRESH_INTERVAL_MS, secretsManagerKeyring } from '../../lambdas/http/cursor-keys.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { FeedConsumer, expectReplicasMatch, scopesOf, type FeedFunction } from '../support/feed-consumer.js';
import { legacyCursor } from '../support/feed-keys.js';
import { dataset, event, user } from '../support/feed-review.js';
import { startSecretsStub, useSecretsStub } from '../support/secrets-stub.js';
import { useFileStore } from '../support/store.js';

const DAY = 86_400_000;
const store = useFileStore({ inProcess: true, direct: true });
const secrets = useSecretsStub('key-one');

/** The feeds' reads: none is expected (a cursor is checked before any read). */
const noReads = new Proxy({}, { get: () => () => Promise.reject(new Error('no read expected')) }) as unknown as FeedReader;
const signerOf = (keys: CursorKeys): string => Buffer.from(keys.signing).toString();
const entries = (asOf: number): FeedCursor => ({ scope: 'EVENTS', mode: 'entries', position: everyShardAt(42), after: '', asOf });

describe('review: feed cursors across key rotations', () => {
  it('a cursor signed after a rotation still opens within its 30 days after the next monthly rotation', async () => {
    let now = Date.parse('2026-11-01T00:00:00.000Z');
    const clock = () => new Date(now);
    // Rotation 1, as docs/deploy.md says: stage, then promote a minute later. A function starts in that minute.
    secrets.stub.stage('key-two');
    now += 30_000;
    const stale = secretsManagerKeyring(secrets.stub.arn, secrets.client, clock);
    await stale.keys();
    now += 30_000;
    secrets.stub.promote();
    const rotation1 = now;

    // Two hours on, that function answers a consumer's page that reached the end: a fresh asOf.
    now += 2 * 3_600_000;
    const given = entries(Math.floor(now / 1000));
    const text = await sealCursor(given, stale);
    // The review saw the old key here ('key-one'): the function has read the secret again since.
    expect(signerOf(await stale.keys())).toBe('key-two');

    // Rotation 2, 30 days after rotation 1 ("at most once every 30 days").
    now = rotation1 + 30 * DAY;
    secrets.stub.stage('key-three');
    now += 60_000;
    secrets.stub.promote();
    // An hour later the consumer comes back: its cursor is 30 days less an hour old, within its lifetime.
    now += 3_600_000;
    const fresh = secretsManagerKeyring(secrets.stub.arn, secrets.client, clock);
    expect(await openCursor(parseCursor(text)!, fresh)).toEqual(given);
  });

  it('a cursor more than 30 days old signed with a key since retired is a 410 (start again), not a 400', async () => {
    const now = new Date('2027-03-01T00:00:00.000Z');
    const old = Buffer.from('key-retired');
    // Two monthly rotations since the consumer's last page: the keys now are the current one and the previous one.
    const keyring = staticKeyring(Buffer.from('key-current'), Buffer.from('key-previous'));
    const asOf = Math.floor(now.getTime() / 1000) - 61 * 86_400;
    // Both as the API gives cursors now and as it gave them before they named their key.
    for (const cursor of [encodeCursor(entries(asOf), old), legacyCursor(entries(asOf), old)]) {
      await expect(catalogueChanges({ feeds: noReads, keyring, now }, { cursor: parseCursor(cursor)!, limit: 100 }, 'https://s.example')).rejects.toBeInstanceOf(CursorExpiredError);
    }
  });
});

/** A client on the stand-in that can be cut off (an outage of Secrets Manager, a network fault): counts the calls it is asked for. */
function cutOffClient() {
  const state = { down: false, calls: 0 };
  const send = (command: Parameters<SecretsManagerClient['send']>[0]) => {
    state.calls++;
    return state.down ? Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { name: 'NetworkingError' })) : secrets.client.send(command);
  };
  return { state, client: { send } as Pick<SecretsManagerClient, 'send'> };
}

/** A page of the catalogue with this cursor: the page, or the status the API answers (an unexposed error is a 500). */
async function statusOf(ctx: FeedContext, cursor: string): Promise<number> {
  return (await answerTo(ctx, cursor)).statusCode;
}

/** The status and headers the API answers a page of the catalogue with this cursor. */
async function answerTo(ctx: FeedContext, cursor: string): Promise<{ statusCode: number; headers?: Record<string, unknown> }> {
  try {
    await catalogueChanges(ctx, { cursor: parseCursor(cursor)!, limit: 100 }, 'https://s.example');
    return { statusCode: 200 };
  } catch (error) {
    if (error instanceof ValidationError) expect(error.errors.map((e) => e.field)).toEqual(['cursor']);
    return errorResponse(error, silentLogger);
  }
}

describe('the keys are read again on a schedule, and a failed read is backed off', () => {
  it(`a function signs with the current key at most ${KEYS_MAX_AGE_MS / 60_000} minutes after a promotion, whenever it started, and reads no more often than that while nothing asks`, async () => {
    let now = Date.parse('2026-12-01T00:00:00.000Z');
    const clock: Clock = () => new Date(now);
    secrets.stub.rotate('sched-one');
    const before = secretsManagerKeyring(secrets.stub.arn, secrets.client, clock);
    expect(signerOf(await before.keys())).toBe('sched-one');
    secrets.stub.stage('sched-two');
    now += 30_000;
    const between = secretsManagerKeyring(secrets.stub.arn, secrets.client, clock);
    expect(signerOf(await between.keys())).toBe('sched-one');
    now += 30_000;
    secrets.stub.promote();
    const promoted = now;
    secrets.stub.calls.splice(0);
    // A request every ten seconds to each for twenty minutes, none with a cursor.
    const late: string[] = [];
    for (; now < promoted + 4 * KEYS_MAX_AGE_MS; now += 10_000) {
      for (const keyring of [before, between]) {
        const signer = signerOf(await keyring.keys());
        if (now - promoted >= KEYS_MAX_AGE_MS && signer !== 'sched-two') late.push(`${signer} at +${(now - promoted) / 1000} s`);
      }
    }
    expect(late).toEqual([]);
    // One read per function per KEYS_MAX_AGE_MS, the first window included (its DescribeSecret, and a GetSecretValue of a version not read before).
    expect(secrets.stub.calls.filter((c) => c === 'DescribeSecret').length).toBeLessThanOrEqual(2 * 5);
  });

  it('with Secrets Manager unreachable from the start, a cursor within its lifetime is a 503 saying when the next try is (clients retry it, keeping the cursor), an expired one still a 410, and the secret is tried once per ten seconds', async () => {
    let now = Date.parse('2026-12-10T00:00:00.000Z');
    const cut = cutOffClient();
    cut.state.down = true;
    const failures: unknown[] = [];
    const keyring = secretsManagerKeyring(secrets.stub.arn, cut.client, () => new Date(now), (error) => failures.push(error));
    const ctx = (): FeedContext => ({ feeds: noReads, keyring, now: new Date(now) });
    const seconds = () => Math.floor(now / 1000);
    const firstTry = now;
    for (let i = 0; i < 30; i++) {
      const answer = await answerTo(ctx(), encodeCursor(entries(seconds()), Buffer.from('sched-one')));
      // Retry-After: the seconds to the next try, rounded up, never 0.
      expect({ status: answer.statusCode, retryAfter: answer.headers?.['Retry-After'] }).toEqual({ status: 503, retryAfter: String(Math.max(1, Math.ceil((firstTry + REFRESH_INTERVAL_MS - now) / 1000))) });
      expect(await statusOf(ctx(), encodeCursor(entries(seconds() - CURSOR_LIFETIME_SECONDS - 1), Buffer.from('anything')))).toBe(410);
      now += 300;
    }
    expect({ calls: cut.state.calls, failures: failures.length }).toEqual({ calls: 1, failures: 1 });
    now += REFRESH_INTERVAL_MS;
    expect(await statusOf(ctx(), encodeCursor(entries(seconds()), Buffer.from('sched-one')))).toBe(503);
    expect(cut.state.calls).toBe(2);
    // Back: the next try, ten seconds on, reads the keys.
    cut.state.down = false;
    now += REFRESH_INTERVAL_MS;
    const current = signerOf(await keyring.keys());
    expect(await openCursor(parseCursor(encodeCursor(entries(seconds()), Buffer.from(current)))!, keyring)).toEqual(entries(seconds()));
  });

  it('once it holds keys, an outage costs one try per ten seconds, keeps signing with the keys held, and a forged cursor is still a 400', async () => {
    let now = Date.parse('2026-12-20T00:00:00.000Z');
    const cut = cutOffClient();
    secrets.stub.rotate('held-one');
    const keyring = secretsManagerKeyring(secrets.stub.arn, cut.client, () => new Date(now));
    expect(signerOf(await keyring.keys())).toBe('held-one');
    cut.state.down = true;
    cut.state.calls = 0;
    const ctx = (): FeedContext => ({ feeds: noReads, keyring, now: new Date(now) });
    // Past the keys' age, a request a second for a minute and a half: each with a genuine cursor, and forged ones.
    now += KEYS_MAX_AGE_MS;
    const start = now;
    for (; now < start + 90_000; now += 1_000) {
      const asOf = Math.floor(now / 1000);
      expect(await openCursor(parseCursor(encodeCursor(entries(asOf), Buffer.from('held-one')))!, keyring)).toEqual(entries(asOf));
      // A key nobody holds (the function tries to read, as for a new key), and the held key's id with another MAC.
      const unknownKey = encodeCursor(entries(asOf), Buffer.from(`forged-${now}`));
      const genuine = encodeCursor(entries(asOf), Buffer.from('held-one'));
      const editedMac = `${genuine.slice(0, -1)}${genuine.endsWith('A') ? 'B' : 'A'}`;
      for (const forged of [unknownKey, editedMac]) expect(await statusOf(ctx(), forged)).toBe(400);
      expect(signerOf(await keyring.keys())).toBe('held-one');
    }
    expect(cut.state.calls).toBeLessThanOrEqual(3 * Math.ceil(90_000 / REFRESH_INTERVAL_MS));
    // Back, with a rotation meanwhile: within ten seconds the function signs with the new key.
    secrets.stub.rotate('held-two');
    cut.state.down = false;
    now += REFRESH_INTERVAL_MS;
    expect(signerOf(await keyring.keys())).toBe('held-two');
  });
});

describe('a consumer following every feed through two rotations', () => {
  const ann = user('usr_ann', 'ann');
  const bob = user('usr_bob', 'bob');
  /** Followed by its place's feed too: one more function whose containers rotate keys. */
  const inBerlin = { location: { name: 'Hall', city: 'Berlin', country: null } };
  const d0: Dataset = {
    ...dataset([ann, bob], [event('evt_a', ann.id, 'A v1', inBerlin), event('evt_b', bob.id, 'B v1'), event('evt_c', ann.id, 'C v1')]),
    rsvps: [{ event_id: 'evt_a', user_id: bob.id, status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' }],
  };

  it('never meets a 400: its cursors open whichever function signed them, one away for longer than 30 days starts again on a 410, and all end equal to the read routes', async () => {
    const keys = await startSecretsStub('rot-one');
    const sm = new SecretsManagerClient({ endpoint: keys.url, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
    try {
      let now = Date.parse('2026-11-21T12:00:00.000Z');
      const clock: Clock = () => new Date(now);
      const table = await store.loaded('rotation', d0);
      const repo = new DynamoRepository(store.client, table);

      // Each feed is its own function; its containers live on (the worst case: one started between a staging and its promotion serves to the end).
      const containers: Record<FeedFunction, CursorKeyring[]> = { catalogue: [], host: [], guests: [], place: [] };
      const served: Record<FeedFunction, number> = { catalogue: 0, host: 0, guests: 0, place: 0 };
      const answered = new Set<string>();
      const startContainers = () => {
        for (const feed of Object.keys(containers) as FeedFunction[]) containers[feed].push(secretsManagerKeyring(keys.arn, sm, clock));
      };
      // Requests go to the containers in turn, so every one of them answers some.
      const contextOf = (feed: FeedFunction): FeedContext => {
        const i = served[feed]++ % containers[feed].length;
        answered.add(`${feed} ${i}`);
        return { feeds: repo, keyring: containers[feed][i]!, now: new Date(now) };
      };
      const consumer = () => new FeedConsumer(repo, scopesOf(store.client, table, new Set([ann.id, bob.id]), ['evt_a', 'evt_b'], [{ city: 'Berlin' }]), contextOf);
      // Polls twice a day; polls once, right after the first promotion, then 29 days later, then after the second; away for 31 days.
      const [follower, monthly, away] = [consumer(), consumer(), consumer()];
      startContainers();

      const versions = new Map<string, number>();
      const next = (id: string) => {
        const v = (versions.get(id) ?? 1) + 1;
        versions.set(id, v);
        return v;
      };
      let step = 0;
      /** A change at the source, one of four kinds in turn: edits, an RSVP or its deletion, a hide or its undoing. */
      const change = async () => {
        const i = step++;
        const hidden = i % 8 === 3;
        const kinds: Change[] = [
          { type: 'event.upserted', version: next('evt_a'), event: event('evt_a', ann.id, `A v${i}`, inBerlin) },
          { type: 'event.upserted', version: next('evt_b'), event: event('evt_b', bob.id, `B v${i}`) },
          i % 8 === 2
            ? { type: 'rsvp.upserted', version: next('rsvp'), rsvp: { event_id: 'evt_a', user_id: ann.id, status: 'yes', rsvp_date: clock().toISOString() } }
            : { type: 'rsvp.deleted', version: next('rsvp'), event_id: 'evt_a', user_id: ann.id },
          // Its guest feed is not followed: hidden, it would answer 404 (as its guest list), and a consumer could not read it.
          { type: 'event.upserted', version: next('evt_c'), event: event('evt_c', ann.id, `C v${i}`, hidden ? { visibility: 'private' } : {}) },
        ];
        await new ChangeApplier(store.client, table, { clock }).apply(kinds[i % 4]!);
      };
      const rotate = async (value: string) => {
        keys.stage(value);
        now += 30_000;
        // A container of each function starts in the minute between the staging and the promotion.
        startContainers();
        now += 30_000;
        keys.promote();
        return now;
      };
      /** Twice a day until `until`: a change, then the follower reads every feed to the end. */
      const halfDays = async (until: number) => {
        for (; now < until; now += DAY / 2) {
          await change();
          await follower.drain();
        }
      };

      for (const c of [follower, monthly, away]) await c.drain();
      now += DAY;
      const promoted1 = await rotate('rot-two');
      // Right after the promotion: functions that read the keys before it still sign with 'rot-one' for a few minutes.
      now += 60_000;
      await change();
      for (const c of [follower, monthly, away]) await c.drain();
      now += 10 * 60_000;
      await halfDays(promoted1 + 29 * DAY);
      await monthly.drain();
      // The next rotation, 31 days after the first (docs/deploy.md).
      await halfDays(promoted1 + 31 * DAY);
      await rotate('rot-three');
      now += 60_000;
      await change();
      for (const c of [follower, monthly, away]) await c.drain();
      await halfDays(now + 2 * DAY);
      await monthly.drain();
      await away.drain();

      const live = (await scopesOf(store.client, table, new Set([ann.id, bob.id]), [])()).users;
      for (const [name, c] of Object.entries({ follower, monthly, away })) {
        expect({ name, refused: c.refused }).toEqual({ name, refused: [] });
        await expectReplicasMatch(store.client, table, c, live);
      }
      // Only the consumer away for more than 30 days was asked to start again.
      expect({ follower: follower.restarts, monthly: monthly.restarts, away: away.restarts > 0 }).toEqual({ follower: 0, monthly: 0, away: true });
      // Every container answered, the ones started between a staging and its promotion included.
      expect(answered.size).toBe(12);
    } finally {
      sm.destroy();
      await keys.close();
    }
  }, 120_000);
});
