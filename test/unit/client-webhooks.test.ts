/**
 * The typed client's webhook verifier (client/src/webhooks.ts, PRODUCT P18:
 * "the typed client verifies a delivery, constant time, 5-minute
 * tolerance"): it accepts exactly what the Standard Webhooks reference
 * library (`standardwebhooks`, the package the sender signs with) accepts,
 * for any secret, id, timestamp and body, signed or tampered with in any of
 * the ways a forger or a broken proxy would (a property, with the library
 * as the oracle); it takes either signature for 24 hours after a rotation;
 * and it says why it refused.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError, WEBHOOK_TOLERANCE_SECONDS, type WebhookDelivery } from '../../client/src/index.js';
import { newWebhookSecret, signDelivery } from '../../lambdas/core/webhook-signing.js';
import type { DeliveryBody } from '../../lambdas/core/webhook-rules.js';
import type { Change } from '../../lambdas/delivery/webhook-page.js';

// The sender's body type is the client's: a change of either side's types fails the typecheck here.
export const sameShape = (body: DeliveryBody<Change>): WebhookDelivery => body;

const delivery = (title: string): string =>
  JSON.stringify({ webhook_id: 'wh_0Vbbm4fIcFmE6IjJ1ltZ', scope: { type: 'catalogue' }, changes: [{ id: 'evt_a', change: 'upserted', event: { id: 'evt_a', title } }, { id: 'evt_b', change: 'removed' }], cursor: 'f3.x.y.z' });

const nowSeconds = () => Math.floor(Date.now() / 1000);
const signed = (secrets: string[], body: string, at = new Date(nowSeconds() * 1000), id = 'msg_delivery-1'): Record<string, string> => ({ ...signDelivery(secrets, id, at, body) });

async function reason(p: Promise<unknown>): Promise<string> {
  const outcome = await p.then(() => 'accepted', (e: unknown) => (e instanceof WebhookVerificationError ? e.reason : `threw ${String(e)}`));
  return outcome;
}

describe('a delivery signed by the sender', () => {
  it('verifies, and answers its id, its timestamp and its body parsed', async () => {
    const secret = newWebhookSecret();
    const body = delivery('Jazz');
    const at = new Date(nowSeconds() * 1000);
    const verified = await verifyWebhook(body, signed([secret], body, at), secret);
    expect(verified).toEqual({ id: 'msg_delivery-1', timestamp: at, delivery: JSON.parse(body) });
  });

  it('after a rotation, carries both signatures: either secret verifies it, and a receiver may hold both', async () => {
    const [old, fresh] = [newWebhookSecret(), newWebhookSecret()];
    const body = delivery('Rotated');
    const headers = signed([fresh, old], body);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secrets of [[old], [fresh], [old, fresh], [newWebhookSecret(), fresh]]) expect((await verifyWebhook(body, headers, secrets)).id).toBe('msg_delivery-1');
    expect(await reason(verifyWebhook(body, headers, [newWebhookSecret()]))).toBe('no_matching_signature');
  });

  it('takes the body as a string or as its bytes, and headers as Fetch Headers or Node\'s req.headers in any case', async () => {
    const secret = newWebhookSecret();
    const body = delivery('São Paulo, ünïcödé, 🎷');
    const headers = signed([secret], body);
    const bytes = new TextEncoder().encode(body);
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    for (const [b, h] of [[body, headers], [bytes, headers], [bytes.buffer, new Headers(headers)], [body, upper]] as const) {
      expect((await verifyWebhook(b, h, secret)).delivery.changes[0]).toMatchObject({ event: { title: 'São Paulo, ünïcödé, 🎷' } });
    }
  });
});

describe('a delivery refused says why', () => {
  const secret = newWebhookSecret();
  const body = delivery('x');
  const now = nowSeconds();

  it.each([
    ['no webhook-id', 'missing_header', { 'webhook-id': undefined }],
    ['no timestamp', 'missing_header', { 'webhook-timestamp': undefined }],
    ['no signature', 'missing_header', { 'webhook-signature': undefined }],
    ['a signature header sent twice', 'missing_header', { 'webhook-signature': ['v1,a', 'v1,b'] }],
    ['a timestamp that is not Unix seconds', 'bad_timestamp', { 'webhook-timestamp': '2026-11-21T12:00:00Z' }],
    ['a timestamp in milliseconds', 'too_new', { 'webhook-timestamp': String(now * 1000) }],
    [`signed ${WEBHOOK_TOLERANCE_SECONDS + 1} s ago`, 'too_old', { 'webhook-timestamp': String(now - WEBHOOK_TOLERANCE_SECONDS - 1) }],
    [`signed ${WEBHOOK_TOLERANCE_SECONDS + 1} s ahead`, 'too_new', { 'webhook-timestamp': String(now + WEBHOOK_TOLERANCE_SECONDS + 1) }],
    ['a v2 signature only', 'no_matching_signature', { 'webhook-signature': 'v2,abc' }],
  ] as [string, string, Record<string, string | readonly string[] | undefined>][])('%s → %s', async (_, expected, change) => {
    const headers: Record<string, string | readonly string[] | undefined> = { ...signed([secret], body, new Date(now * 1000)), ...change };
    expect(await reason(verifyWebhook(body, headers, secret, { now: now * 1000 }))).toBe(expected);
  });

  it('the tolerance is 5 minutes either way by default, and may be set', async () => {
    const at = (offset: number) => signed([secret], body, new Date((now + offset) * 1000));
    expect(await reason(verifyWebhook(body, at(-WEBHOOK_TOLERANCE_SECONDS), secret, { now: now * 1000 }))).toBe('accepted');
    expect(await reason(verifyWebhook(body, at(WEBHOOK_TOLERANCE_SECONDS), secret, { now: new Date(now * 1000) }))).toBe('accepted');
    expect(await reason(verifyWebhook(body, at(-61), secret, { now: now * 1000, toleranceSeconds: 60 }))).toBe('too_old');
  });

  it('a signed body that is not a delivery is bad_body, after its signature is checked (an unsigned one is never parsed)', async () => {
    for (const text of ['not json', '[1,2]', '{"changes":"all"}', '\u00ff']) {
      expect(await reason(verifyWebhook(text, signed([secret], text), secret))).toBe('bad_body');
      expect(await reason(verifyWebhook(text, signed([newWebhookSecret()], text), secret))).toBe('no_matching_signature');
    }
    // Bytes that are not UTF-8, signed as they are.
    const bytes = new Uint8Array([0x7b, 0xff, 0x7d]);
    const latin = String.fromCharCode(...bytes);
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(nowSeconds()), 'webhook-signature': signDelivery([secret], 'msg_1', new Date(), latin)['webhook-signature'] };
    expect(await reason(verifyWebhook(bytes, headers, secret))).not.toBe('accepted');
  });

  it('a secret that is not one the API gave is a programming error, not a refusal', async () => {
    for (const bad of ['', 'whsec_', 'whsec_not base64!', randomBytes(32).toString('base64')]) {
      expect(await reason(verifyWebhook(body, signed([secret], body), bad))).toMatch(/^threw TypeError/);
    }
    expect(await reason(verifyWebhook(body, signed([secret], body), []))).toMatch(/^threw TypeError/);
  });
});

describe('accepts exactly what the reference library accepts', () => {
  type Tamper =
    | { kind: 'none' }
    | { kind: 'body'; at: number; with: string }
    | { kind: 'id' }
    | { kind: 'timestamp'; by: number }
    | { kind: 'signature'; at: number }
    | { kind: 'other secret' }
    | { kind: 'rotated' }
    | { kind: 'garbage'; text: string }
    | { kind: 'drop v1' };
  const tamper: fc.Arbitrary<Tamper> = fc.oneof(
    fc.constant({ kind: 'none' as const }),
    fc.record({ kind: fc.constant('body' as const), at: fc.nat(), with: fc.string({ minLength: 1, maxLength: 2 }) }),
    fc.constant({ kind: 'id' as const }),
    // Away from the tolerance's edges by two seconds: the two verifiers read the clock a moment apart.
    fc.record({ kind: fc.constant('timestamp' as const), by: fc.oneof(fc.integer({ min: -298, max: 298 }), fc.integer({ min: 302, max: 100_000 }), fc.integer({ min: -100_000, max: -302 })) }),
    fc.record({ kind: fc.constant('signature' as const), at: fc.nat() }),
    fc.constant({ kind: 'other secret' as const }),
    fc.constant({ kind: 'rotated' as const }),
    fc.record({ kind: fc.constant('garbage' as const), text: fc.string({ maxLength: 60 }) }),
    fc.constant({ kind: 'drop v1' as const }),
  );

  it('for any secret, id, timestamp, body and tampering', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 16, maxLength: 64 }),
        fc.stringMatching(/^msg_[A-Za-z0-9_-]{1,30}$/),
        fc.integer({ min: -298, max: 298 }),
        fc.string({ maxLength: 80 }),
        tamper,
        async (key, id, offset, title, t) => {
          const secret = `whsec_${Buffer.from(key).toString('base64')}`;
          let body = delivery(title);
          const at = new Date((nowSeconds() + offset) * 1000);
          const headers: Record<string, string> = { ...signDelivery([secret], id, at, body) };
          const sig = headers['webhook-signature']!;
          if (t.kind === 'body') body = `${body.slice(0, t.at % body.length)}${t.with}${body.slice((t.at % body.length) + 1)}`;
          if (t.kind === 'id') headers['webhook-id'] = `${id}x`;
          if (t.kind === 'timestamp') headers['webhook-timestamp'] = String(Number(headers['webhook-timestamp']) + t.by);
          if (t.kind === 'signature') {
            const i = 3 + (t.at % (sig.length - 3));
            headers['webhook-signature'] = `${sig.slice(0, i)}${sig[i] === 'A' ? 'B' : 'A'}${sig.slice(i + 1)}`;
          }
          if (t.kind === 'other secret') headers['webhook-signature'] = signDelivery([newWebhookSecret()], id, at, body)['webhook-signature'];
          if (t.kind === 'rotated') headers['webhook-signature'] = signDelivery([newWebhookSecret(), secret], id, at, body)['webhook-signature'];
          if (t.kind === 'garbage') headers['webhook-signature'] = t.text;
          if (t.kind === 'drop v1') headers['webhook-signature'] = sig.replace('v1,', 'v1a,');
          let reference: boolean;
          try {
            new Webhook(secret).verify(body, headers);
            reference = true;
          } catch {
            reference = false;
          }
          const ours = await verifyWebhook(body, headers, secret).then(
            () => true,
            (e: unknown) => {
              if (!(e instanceof WebhookVerificationError)) throw e;
              // A tampered body can stop being a delivery: then the signature still decided first.
              return e.reason === 'bad_body' ? reference : false;
            },
          );
          expect({ t, ours }).toEqual({ t, ours: reference });
        },
      ),
      { numRuns: 400 },
    );
  });
});
