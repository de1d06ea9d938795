import { describe, expect, it } from '@jest/globals';
import { apiKeyHeaderName, extractApiKey, hashApiKey } from '../../lambdas/core/api-key.js';

const KEY = 'pk_demo_0123456789abcdefghijklmnopqrstuv';
const OTHER = 'pk_other_0123456789abcdefghijklmnopqrst';

describe('extractApiKey', () => {
  it('names the header after the service', () => {
    expect(apiKeyHeaderName('events')).toBe('x-events-api-key');
    expect(apiKeyHeaderName('gatherly')).toBe('x-gatherly-api-key');
  });
  it('reads the x-{service}-api-key header, whatever its case', () => {
    expect(extractApiKey({ 'X-Events-Api-Key': KEY }, 'events')).toBe(KEY);
  });
  it('ignores another service name’s header', () => {
    expect(extractApiKey({ 'x-service-api-key': KEY }, 'events')).toBeNull();
  });
  it.each(['Bearer', 'bearer', 'BEARER'])('reads Authorization: %s <key>', (scheme) => {
    expect(extractApiKey({ authorization: `${scheme} ${KEY}` }, 'events')).toBe(KEY);
  });
  it('prefers the header when both carriers are present', () => {
    expect(extractApiKey({ 'x-events-api-key': KEY, Authorization: `Bearer ${OTHER}` }, 'events')).toBe(KEY);
  });
  it('falls back to Bearer when the header is empty', () => {
    expect(extractApiKey({ 'x-events-api-key': ' ', Authorization: `Bearer ${OTHER}` }, 'events')).toBe(OTHER);
  });
  it.each([
    [{ authorization: `Basic ${KEY}` }],
    [{ authorization: KEY }],
    [{ authorization: 'Bearer' }],
    [{ 'x-events-api-key': 'short' }],
    [{ 'x-events-api-key': `${KEY} extra` }],
    [{}],
    [null],
  ])('finds no key in %j', (headers) => {
    expect(extractApiKey(headers, 'events')).toBeNull();
  });
  it('reads headers whose names are prototype members as ordinary headers', () => {
    const headers = JSON.parse(`{"__proto__":"x","constructor":"y","toString":"z","x-events-api-key":"${KEY}"}`) as Record<string, string>;
    expect(extractApiKey(headers, 'events')).toBe(KEY);
  });
  it('treats a value that is not a string as no key, never as an error', () => {
    const headers = { 'x-events-api-key': null, authorization: [`Bearer ${KEY}`] } as unknown as Record<string, string>;
    expect(extractApiKey(headers, 'events')).toBeNull();
  });
});

describe('hashApiKey', () => {
  it('is hex SHA-256', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('quotaReset', () => {
  it('is the next UTC midnight, with Retry-After rounded up', async () => {
    const { quotaReset } = await import('../../lambdas/core/authorize.js');
    expect(quotaReset(new Date('2026-11-21T23:59:59.001Z'))).toEqual({ resetEpochSeconds: Date.parse('2026-11-22T00:00:00Z') / 1000, retryAfterSeconds: 1 });
    expect(quotaReset(new Date('2026-12-31T00:00:00.000Z'))).toEqual({ resetEpochSeconds: Date.parse('2027-01-01T00:00:00Z') / 1000, retryAfterSeconds: 86400 });
  });
});
