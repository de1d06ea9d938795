/**
 * A webhook's create refused (PRODUCT P18's bad input and its SSRF rules, issue
 * 60 items 5 and 7), on the local server as `npm start` runs it: without the
 * loopback setting, the outbound guard checking every URL, a name resolver of
 * the test's own (test/support/dns-table.ts) standing for DNS. Each refusal is
 * a 400, 404, 409 or 422 naming the field, and the table holds exactly the
 * webhook items it held before (nothing stored, not even a place or a scope
 * entry). A receiver listening on 127.0.0.1 is refused like any private
 * address and gets nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CreateWebhookInput } from '../../keys/admin-client.js';
import { dnsTable } from '../support/dns-table.js';
import { KEYS, NOW } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { refusal, webhookAdmin, type WebhookAdmin } from '../support/webhook-admin.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

const PUBLIC = '93.184.215.14';
const dns = dnsTable({
  'hooks.example.com': [PUBLIC],
  'private.example.com': ['10.0.0.7'],
  'loopback.example.com': ['127.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
  'ec2-v6.example.com': ['fd00:ec2::254'],
  'cgnat.example.com': ['100.64.0.1'],
  'multicast.example.com': ['224.0.0.251'],
  'mixed.example.com': [PUBLIC, '2606:2800:21f:cb07:6820:80da:af6b:8b2c', '10.1.2.3'],
  'mapped.example.com': ['::ffff:10.0.0.1'],
  'nat64.example.com': ['64:ff9b::a00:1'],
});

let server: TestServer;
let hooks: WebhookAdmin;
let receiver: Receiver;
let key: { key: string; keyId: string; userId: string };
beforeAll(async () => {
  server = await startTestServer({ webhookGuard: { resolver: dns.resolver } });
  hooks = webhookAdmin(server, () => new Date(NOW), 'refusals');
  receiver = await startReceiver();
  key = await hooks.newKey('usr_alice');
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const valid: CreateWebhookInput = { url: 'https://hooks.example.com/events', scope: { type: 'catalogue' } };
type Case = [name: string, input: () => Record<string, unknown>, status: number, field: string, code: string, message: RegExp];
const url = (u: string | (() => string)) => () => ({ ...valid, url: typeof u === 'string' ? u : u() });

const URLS: Case[] = [
  ['plain http', url('http://hooks.example.com/events'), 400, 'url', 'BAD_URL', /must use https:\/\/ \(its scheme is http\)/],
  ['a port', url('https://hooks.example.com:8443/events'), 400, 'url', 'BAD_URL', /must use port 443 \(it names port 8443\)/],
  ['credentials', url('https://hook:s3cret@hooks.example.com/events'), 400, 'url', 'BAD_URL', /must not contain a user name or password/],
  ['a user name alone', url('https://hook@hooks.example.com/events'), 400, 'url', 'BAD_URL', /must not contain a user name or password/],
  ['2,049 characters', url(`https://hooks.example.com/${'x'.repeat(2049 - 'https://hooks.example.com/'.length)}`), 400, 'url', 'BAD_URL', /at most 2,?048/],
  ['a host that does not resolve', url('https://nowhere.example.com/events'), 400, 'url', 'BAD_URL', /nowhere\.example\.com cannot be reached: it does not resolve \(ENOTFOUND\)/],
  ['a host resolving to a private address', url('https://private.example.com/events'), 400, 'url', 'BAD_URL', /resolves to 10\.0\.0\.7, a private address/],
  ['a host resolving to loopback', url('https://loopback.example.com/events'), 400, 'url', 'BAD_URL', /resolves to 127\.0\.0\.1, a loopback address/],
  ['a host resolving to the metadata service', url('https://metadata.example.com/events'), 400, 'url', 'BAD_URL', /169\.254\.169\.254, a cloud metadata service's address/],
  ["a host resolving to EC2's IPv6 metadata service", url('https://ec2-v6.example.com/events'), 400, 'url', 'BAD_URL', /fd00:ec2::254, a cloud metadata service's address/],
  ['a host resolving to CGNAT', url('https://cgnat.example.com/events'), 400, 'url', 'BAD_URL', /100\.64\.0\.1, a shared \(carrier-grade NAT\) address/],
  ['a host resolving to multicast', url('https://multicast.example.com/events'), 400, 'url', 'BAD_URL', /224\.0\.0\.251, a multicast address/],
  ['a host with one private address among public ones', url('https://mixed.example.com/events'), 400, 'url', 'BAD_URL', /resolves to 10\.1\.2\.3, a private address/],
  ['a host resolving to an IPv4-mapped private address', url('https://mapped.example.com/events'), 400, 'url', 'BAD_URL', /an IPv4-mapped address carrying 10\.0\.0\.1 \(a private address\)/],
  ['a host resolving to a NAT64 form of a private address', url('https://nat64.example.com/events'), 400, 'url', 'BAD_URL', /a NAT64 address carrying 10\.0\.0\.1 \(a private address\)/],
  ['the metadata service by address', url('https://169.254.169.254/latest/meta-data/'), 400, 'url', 'BAD_URL', /host is 169\.254\.169\.254, a cloud metadata service's address/],
  ['loopback by an IPv4 spelling', url('https://0x7f.1/events'), 400, 'url', 'BAD_URL', /host is 127\.0\.0\.1, a loopback address/],
  ['IPv6 loopback', url('https://[::1]/events'), 400, 'url', 'BAD_URL', /host is ::1, a loopback address/],
  ['a receiver on this machine, without the local setting', url(() => receiver.url), 400, 'url', 'BAD_URL', /must use https:\/\/ \(its scheme is http\)/],
  ['a receiver on this machine over https', url(() => receiver.url.replace('http:', 'https:')), 400, 'url', 'BAD_URL', /must use port 443/],
  ['a fragment', url('https://hooks.example.com/events#here'), 400, 'url', 'BAD_URL', /must not have a fragment/],
  ['not a URL', url('hooks.example.com/events'), 400, 'url', 'BAD_URL', /not an absolute URL/],
  ['no URL', () => ({ scope: { type: 'catalogue' } }), 400, 'url', 'BAD_INPUT', /url is required/],
];

const OTHERS: Case[] = [
  ['an unknown scope', () => ({ ...valid, scope: { type: 'everything' } }), 400, 'scope.type', 'BAD_INPUT', /one of catalogue, host, place, guests/],
  ['no scope', () => ({ url: valid.url }), 400, 'scope', 'BAD_INPUT', /catalogue, host, place, guests/],
  ['a place without city and country', () => ({ ...valid, scope: { type: 'place' } }), 400, 'scope.city', 'BAD_INPUT', /needs a city, a country or both/],
  ['a place with a blank city', () => ({ ...valid, scope: { type: 'place', city: '   ' } }), 400, 'scope.city', 'BAD_INPUT', /must not be empty/],
  ['a host named by username', () => ({ ...valid, scope: { type: 'host', userId: 'alice' } }), 400, 'scope.userId', 'BAD_INPUT', /user id \(usr_…\)/],
  ['a host that is no user', () => ({ ...valid, scope: { type: 'host', userId: 'usr_nobody' } }), 404, 'scope.userId', 'UNKNOWN_SCOPE', /No user usr_nobody/],
  ['the guests of an event that is not public', () => ({ ...valid, scope: { type: 'guests', eventId: 'evt_secret03' } }), 404, 'scope.eventId', 'UNKNOWN_SCOPE', /No public event evt_secret03/],
  ['a malformed start cursor', () => ({ ...valid, start_cursor: 'f3.nope' }), 400, 'start_cursor', 'BAD_CURSOR', /next_cursor of this scope's feed/],
  ['a start cursor and a backfill', () => ({ ...valid, start_cursor: 'f3.nope', backfill: true }), 400, 'backfill', 'BAD_INPUT', /not both/],
  ['a backfill that is not a boolean', () => ({ ...valid, backfill: 'yes' }), 400, 'backfill', 'BAD_INPUT', /true or false/],
  ['a malformed idempotency key', () => ({ ...valid, idempotencyKey: 'short' }), 400, 'idempotencyKey', 'BAD_INPUT', /8-128 characters/],
  ['an unknown field', () => ({ ...valid, secret: 'whsec_mine' }), 400, 'secret', 'BAD_INPUT', /Unknown field: secret/],
];

describe('a create refused names its field and stores nothing', () => {
  it.each([...URLS, ...OTHERS])('%s', async (_, input, status, field, code, message) => {
    const before = await hooks.webhookItems();
    const refused = await refusal(hooks.admin.createWebhook(key.userId, key.keyId, input() as never));
    expect({ status: refused.status, field: refused.field, code: refused.code }).toEqual({ status, field, code });
    expect(refused.message).toMatch(message);
    expect(await hooks.webhookItems()).toBe(before);
  });

  it("a start cursor of another scope's feed", async () => {
    const pull = await get<{ data: { next_cursor: string } }>(`${server.publicBaseUrl}/changes/events?limit=1`, { authorization: `Bearer ${KEYS.both}` });
    const before = await hooks.webhookItems();
    const refused = await refusal(hooks.admin.createWebhook(key.userId, key.keyId, { ...valid, scope: { type: 'host', userId: 'usr_alice' }, start_cursor: pull.body.data.next_cursor }));
    expect([refused.status, refused.field, refused.code]).toEqual([400, 'start_cursor', 'BAD_CURSOR']);
    expect(await hooks.webhookItems()).toBe(before);
  });

  it('the key and its user: unknown user, a key that is not the user\'s, an unknown or malformed key id, a revoked key, guests without guests:read', async () => {
    const eventsOnly = await hooks.newKey('usr_alice', ['events:read']);
    const revoked = await hooks.newKey('usr_alice');
    await hooks.admin.revoke('usr_alice', revoked.keyId);
    const before = await hooks.webhookItems();
    const cases: [() => Promise<unknown>, number, string, string][] = [
      [() => hooks.admin.createWebhook('usr_nobody', key.keyId, valid), 404, 'userId', 'UNKNOWN_USER'],
      [() => hooks.admin.createWebhook('usr_bob', key.keyId, valid), 404, 'keyId', 'UNKNOWN_KEY'],
      [() => hooks.admin.createWebhook('usr_alice', 'key_nope', valid), 404, 'keyId', 'UNKNOWN_KEY'],
      [() => hooks.admin.createWebhook('usr_alice', 'nope', valid), 400, 'keyId', 'BAD_INPUT'],
      [() => hooks.admin.createWebhook('usr_alice', revoked.keyId, valid), 409, 'keyId', 'KEY_REVOKED'],
      [() => hooks.admin.createWebhook('usr_alice', eventsOnly.keyId, { ...valid, scope: { type: 'guests', eventId: 'evt_jazz01' } }), 400, 'scope', 'BAD_SCOPE'],
    ];
    for (const [request, status, field, code] of cases) {
      const refused = await refusal(request());
      expect({ status: refused.status, field: refused.field, code: refused.code }).toEqual({ status, field, code });
    }
    expect(await hooks.webhookItems()).toBe(before);
  });

  it('a sixth webhook of a key, and an idempotency key reused with other parameters', async () => {
    const full = await hooks.newKey('usr_carol');
    for (let i = 0; i < 5; i++) await hooks.createHook(full.userId, full.keyId, { ...valid, idempotencyKey: `sixth-test-${i}` });
    const before = await hooks.webhookItems();
    const sixth = await refusal(hooks.admin.createWebhook(full.userId, full.keyId, valid));
    expect([sixth.status, sixth.field, sixth.code]).toEqual([409, 'keyId', 'LIMIT_REACHED']);
    const mismatch = await refusal(hooks.admin.createWebhook(full.userId, full.keyId, { ...valid, url: 'https://hooks.example.com/other', idempotencyKey: 'sixth-test-0' }));
    expect([mismatch.status, mismatch.field, mismatch.code]).toEqual([422, 'idempotencyKey', 'IDEMPOTENCY_MISMATCH']);
    expect(await hooks.webhookItems()).toBe(before);
    expect(await hooks.admin.listWebhooks(full.userId, full.keyId)).toHaveLength(5);
  });
});

describe('what the guard lets through', () => {
  it('a host that resolves only to public addresses, on 443 (written or not), is created as given, after the host was resolved', async () => {
    const asked = dns.asked.length;
    const made = await hooks.createHook(key.userId, key.keyId, { url: 'https://hooks.example.com:443/events?topic=all', scope: { type: 'catalogue' } });
    expect(made).toMatchObject({ state: 'active', url: 'https://hooks.example.com:443/events?topic=all' });
    expect(dns.asked.slice(asked)).toEqual(['hooks.example.com']);
    await hooks.admin.deleteWebhook(key.userId, key.keyId, made.webhookId);
  });

  it('the receiver on this machine that was refused got nothing', () => {
    expect(receiver.deliveries).toEqual([]);
  });
});
