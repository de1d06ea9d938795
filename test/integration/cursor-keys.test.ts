/**
 * The feed functions' cursor keys in Lambda (lambdas/http/cursor-keys.ts),
 * read from a Secrets Manager stand-in through the real SDK client: a
 * rotation answers no 400 to the cursors consumers hold (the previous key is
 * accepted for a cursor's lifetime, a pending one as soon as it is staged,
 * and a function that started before the rotation reads the keys again when
 * it meets a cursor naming the new one), a cursor of a key two rotations old
 * is refused, and cursors nobody signed cost at most one read of the secret
 * per ten seconds. The keys' reading on a schedule, failed reads and two
 * rotations under a consumer: test/integration/cursor-key-rotation.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { encodeCursor, openCursor, parseCursor, type FeedCursor, everyShardAt } from '../../lambdas/core/feed-cursor.js';
import { REFRESH_INTERVAL_MS, secretsManagerKeyring } from '../../lambdas/http/cursor-keys.js';
import { useSecretsStub } from '../support/secrets-stub.js';

const secrets = useSecretsStub('key-one');

const cursor: FeedCursor = { scope: 'EVENTS', mode: 'entries', position: everyShardAt(7), after: '', asOf: 1_700_000_000 };
const sealedWith = (key: string) => parseCursor(encodeCursor(cursor, Buffer.from(key)))!;

describe('cursor keys from Secrets Manager', () => {
  it('reads the secret once, signs with it, and survives rotations without refusing a cursor in its lifetime', async () => {
    let now = Date.parse('2026-11-21T12:00:00.000Z');
    const keyring = secretsManagerKeyring(secrets.stub.arn, secrets.client, () => new Date(now));
    secrets.stub.calls.splice(0);
    expect(Buffer.from((await keyring.keys()).signing).toString()).toBe('key-one');
    expect(await openCursor(sealedWith('key-one'), keyring)).toEqual(cursor);
    // One answer says which version holds which stage (DescribeSecret), then the one version's value.
    expect(secrets.stub.calls).toEqual(['DescribeSecret', expect.stringMatching(/^GetSecretValue [0-9a-f-]{36}$/)]);

    // A rotation in one step, a minute on: a cursor a new function signed is read after one more read of the secret.
    secrets.stub.rotate('key-two');
    now += 60_000;
    expect(await openCursor(sealedWith('key-two'), keyring)).toEqual(cursor);
    expect(Buffer.from((await keyring.keys()).signing).toString()).toBe('key-two');
    // The old key's cursors still open (AWSPREVIOUS), with no read.
    const reads = secrets.stub.calls.length;
    expect(await openCursor(sealedWith('key-one'), keyring)).toEqual(cursor);
    expect(secrets.stub.calls.length).toBe(reads);

    // Two rotations on, the first key's cursors are no longer accepted.
    secrets.stub.rotate('key-three');
    now += 60_000;
    expect(await openCursor(sealedWith('key-three'), keyring)).toEqual(cursor);
    expect(await openCursor(sealedWith('key-one'), keyring)).toBeNull();
  });

  it('a rotation staged before it is promoted is refused nowhere, even by a function that started a moment before the promotion', async () => {
    let now = Date.parse('2026-11-21T12:00:00.000Z');
    const clock = () => new Date(now);
    // One function started before the staging, one a minute after it, a second before the promotion.
    const early = secretsManagerKeyring(secrets.stub.arn, secrets.client, clock);
    await early.keys();
    secrets.stub.stage('key-four');
    now += 60_000;
    const late = secretsManagerKeyring(secrets.stub.arn, secrets.client, clock);
    await late.keys();
    now += 1_000;
    secrets.stub.promote();
    // The late one knows the new key already (pending): no read.
    const reads = secrets.stub.calls.length;
    expect(await openCursor(sealedWith('key-four'), late)).toEqual(cursor);
    expect(secrets.stub.calls.length).toBe(reads);
    // The early one loaded more than ten seconds ago: it reads the keys again and accepts it.
    expect(await openCursor(sealedWith('key-four'), early)).toEqual(cursor);
    // Both still accept the key just replaced.
    for (const keyring of [early, late]) expect(await openCursor(sealedWith('key-three'), keyring)).toEqual(cursor);
  });

  it('cursors nobody signed read the secret again at most once every ten seconds', async () => {
    let now = Date.parse('2026-11-21T12:00:00.000Z');
    const keyring = secretsManagerKeyring(secrets.stub.arn, secrets.client, () => new Date(now));
    await keyring.keys();
    secrets.stub.calls.splice(0);
    for (let i = 0; i < 20; i++) expect(await openCursor(sealedWith(`forged-${i}`), keyring)).toBeNull();
    expect(secrets.stub.calls).toEqual([]);
    now += REFRESH_INTERVAL_MS + 1;
    for (let i = 0; i < 20; i++) expect(await openCursor(sealedWith(`forged-${i}`), keyring)).toBeNull();
    // One read: which versions hold the stages (the values of versions already read are not read again).
    expect(secrets.stub.calls).toEqual(['DescribeSecret']);
  });
});
