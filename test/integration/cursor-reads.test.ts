/**
 * A page's reads beside the cursor keys' (lambdas/core/cursor-reads.ts,
 * readIfGenuine) with the real keyring over the Secrets Manager stand-in:
 * what a cursor costs, and what it is answered, when the page's data is
 * read before its MAC is known (a container's first page, a cursor of a key
 * not held yet). The round trips themselves: d9-round-trips-keyring.test.ts.
 *
 * - A cursor the keys held call forged reads no data.
 * - One naming a key nobody holds reads data only beside a read of the keys
 *   (at most one per ten seconds a container), and what it read is dropped:
 *   the answer is "not genuine" (a 400), whatever the data read answered,
 *   its failure included.
 * - A genuine one is answered from the read made beside the keys'.
 * - With no key readable, the keys' failure is the answer (the 503), never
 *   the data read's.
 */
import { describe, expect, it } from '@jest/globals';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { readIfGenuine } from '../../lambdas/core/cursor-reads.js';
import { ServiceBusyError } from '../../lambdas/core/errors.js';
import { encodeCursor, everyShardAt, parseCursor, type FeedCursor } from '../../lambdas/core/feed-cursor.js';
import { REFRESH_INTERVAL_MS, secretsManagerKeyring } from '../../lambdas/http/cursor-keys.js';
import { useSecretsStub } from '../support/secrets-stub.js';

const secrets = useSecretsStub('reads-key');
const cursor: FeedCursor = { scope: 'EVENTS', mode: 'entries', position: everyShardAt(3), after: '', asOf: 1_800_000_000 };
const signedWith = (key: string) => parseCursor(encodeCursor(cursor, Buffer.from(key)))!;

/** The page's data read, counted; `fails` makes it fail as a store could. */
function dataRead(fails = false) {
  const state = { reads: 0 };
  return {
    state,
    read: async () => {
      state.reads++;
      if (fails) throw new Error('the store refused this read');
      return 'the page';
    },
  };
}

describe('reading a page beside the cursor keys', () => {
  it('a cursor the keys held call forged reads no data; one of a key nobody holds reads only beside a read of the keys, and is dropped', async () => {
    let now = Date.parse('2026-12-01T00:00:00.000Z');
    const keyring = secretsManagerKeyring(secrets.stub.arn, secrets.client, () => new Date(now));
    await keyring.keys();
    const genuine = encodeCursor(cursor, Buffer.from('reads-key'));
    const edited = parseCursor(`${genuine.slice(0, -1)}${genuine.endsWith('A') ? 'B' : 'A'}`)!;
    const data = dataRead();
    expect(await readIfGenuine(edited, keyring, data.read)).toBeNull();
    expect(data.state.reads).toBe(0);

    // Ten seconds on, a cursor naming a key nobody holds: the keys are read again, the page beside them, then dropped.
    now += REFRESH_INTERVAL_MS;
    secrets.stub.calls.splice(0);
    expect(await readIfGenuine(signedWith('forged-one'), keyring, data.read)).toBeNull();
    expect({ reads: data.state.reads, secret: secrets.stub.calls }).toEqual({ reads: 1, secret: ['DescribeSecret'] });
    // More of them within the ten seconds: no read of the keys, so no read of data either.
    for (let i = 0; i < 10; i++) expect(await readIfGenuine(signedWith(`forged-${i}`), keyring, data.read)).toBeNull();
    expect({ reads: data.state.reads, secret: secrets.stub.calls.length }).toEqual({ reads: 1, secret: 1 });
    // The genuine one is read at once, with no read of the keys.
    expect(await readIfGenuine(parseCursor(genuine)!, keyring, data.read)).toEqual({ value: 'the page' });
    expect(secrets.stub.calls.length).toBe(1);
  });

  it("a container's first page: a genuine cursor answered from the read beside the keys', a forged one dropped whatever its read answered", async () => {
    const now = Date.parse('2026-12-01T00:00:00.000Z');
    const fresh = () => secretsManagerKeyring(secrets.stub.arn, secrets.client, () => new Date(now));
    const data = dataRead();
    expect(await readIfGenuine(signedWith('reads-key'), fresh(), data.read)).toEqual({ value: 'the page' });
    expect(data.state.reads).toBe(1);
    const failing = dataRead(true);
    expect(await readIfGenuine(signedWith('forged'), fresh(), failing.read)).toBeNull();
    expect(failing.state.reads).toBe(1);
    // A genuine cursor whose read fails is answered with that failure.
    await expect(readIfGenuine(signedWith('reads-key'), fresh(), failing.read)).rejects.toThrow('the store refused this read');
  });

  it('with no key readable, the answer is the keys\' 503, not what the data read said', async () => {
    const now = Date.parse('2026-12-01T00:00:00.000Z');
    const down = { send: () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { name: 'NetworkingError' })) } as unknown as Pick<SecretsManagerClient, 'send'>;
    const keyring = secretsManagerKeyring(secrets.stub.arn, down, () => new Date(now));
    const data = dataRead(true);
    await expect(readIfGenuine(signedWith('reads-key'), keyring, data.read)).rejects.toBeInstanceOf(ServiceBusyError);
    // Within the ten seconds no read of the keys is tried, and so no data is read.
    await expect(readIfGenuine(signedWith('reads-key'), keyring, data.read)).rejects.toBeInstanceOf(ServiceBusyError);
    expect(data.state.reads).toBe(1);
  });
});
