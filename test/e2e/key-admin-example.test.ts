/** keys/examples/manage-keys.ts, the example of docs/managing-keys.md, run as a script against the local server with the local key pair. */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { LOCAL_KEY_ADMIN_PRINCIPAL } from '../../local/sigv4-check.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { runTs } from '../support/process.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const env = () => ({
  KEY_ADMIN_URL: server.keyAdminUrl,
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: LOCAL_KEY_ADMIN_PRINCIPAL.accessKeyId,
  AWS_SECRET_ACCESS_KEY: LOCAL_KEY_ADMIN_PRINCIPAL.secretAccessKey,
});

it('creates a key that answers 200 on the Public API, retries without a second key or a second reveal, lists, revokes (the key answers 401 at once), and is told a second revoke is already done', async () => {
  const { code, stdout, stderr } = await runTs('keys/examples/manage-keys.ts', ['usr_frank'], { ...env(), PUBLIC_API_URL: `${server.url}/api/public/v1` }).done;
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  const [created, works, retried, ...rest] = stdout.trim().split('\n');
  const keyId = /^created (key_\w+) \(events:read\); key shown once: pk_\w{40}$/.exec(created!)?.[1];
  expect(keyId).toBeDefined();
  expect(works).toBe('the key on the Public API: 200');
  expect(retried).toBe(`retried: ${keyId}, replayed=true, key not shown again`);
  expect(rest).toEqual([
    `listed: ${keyId} active "Website"`,
    expect.stringMatching(new RegExp(`^revoked ${keyId} at \\d{4}-`)),
    'the key on the Public API after its revoke: 401',
    'again: 409 ALREADY_REVOKED (keyId)',
  ]);
});

it('without PUBLIC_API_URL, makes, lists and revokes without trying the key', async () => {
  const { code, stdout } = await runTs('keys/examples/manage-keys.ts', ['usr_frank'], env()).done;
  expect(code).toBe(0);
  expect(stdout).not.toContain('Public API');
});

it('is refused without the local pair, as AWS refuses unsigned or wrongly signed requests', async () => {
  const { code, stderr } = await runTs('keys/examples/manage-keys.ts', ['usr_frank'], { ...env(), AWS_SECRET_ACCESS_KEY: 'wrong' }).done;
  expect(code).not.toBe(0);
  expect(stderr).toContain('KeyAdminError: The request signature we calculated does not match');
});

it('names what it needs when run without it: the user id, the URL, the region and the credentials', async () => {
  const { code, stdout, stderr } = await runTs('keys/examples/manage-keys.ts', [], { KEY_ADMIN_URL: '', AWS_REGION: '' }).done;
  expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
  for (const needed of ['USER_ID', 'KEY_ADMIN_URL', 'AWS_REGION', 'AWS_ACCESS_KEY_ID=AKIALOCALKEYADMIN000', 'AWS_SECRET_ACCESS_KEY=local-key-admin-secret-not-an-aws-secret']) expect(stderr).toContain(needed);
});

it("the command docs/managing-keys.md shows signs with the server's local pair", () => {
  const page = readFileSync(new URL('../../docs/managing-keys.md', import.meta.url), 'utf8');
  const shown = /AWS_ACCESS_KEY_ID=(\S+) AWS_SECRET_ACCESS_KEY=(\S+) npx tsx keys\/examples\/manage-keys\.ts usr_frank/.exec(page);
  expect(shown?.slice(1)).toEqual([LOCAL_KEY_ADMIN_PRINCIPAL.accessKeyId, LOCAL_KEY_ADMIN_PRINCIPAL.secretAccessKey]);
});
