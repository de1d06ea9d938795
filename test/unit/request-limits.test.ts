import { describe, expect, it } from '@jest/globals';
import { API_GATEWAY_LIMITS, methodArnTooLong, rawEnvelopeResponse, sizeLimitBreach } from '../../local/request-limits.js';

/** Raw headers whose lines (`name: value\r\n`) add up to exactly `bytes`. */
const headersOfSize = (bytes: number) => ['x-pad', 'p'.repeat(bytes - 'x-pad: \r\n'.length)];

describe('API Gateway size limits', () => {
  it('allows a URL of 10,240 characters and refuses one more with 414', () => {
    const target = (n: number) => `/api/embed/v1/events/x?q=${'a'.repeat(n - '/api/embed/v1/events/x?q='.length)}`;
    expect(sizeLimitBreach(target(API_GATEWAY_LIMITS.urlLength), [])).toBeNull();
    expect(sizeLimitBreach(target(API_GATEWAY_LIMITS.urlLength + 1), [])).toEqual({ status: 414, message: 'Request URI too long.' });
  });

  it('allows 10,240 bytes of header lines and refuses one more with 431, counting bytes as sent', () => {
    expect(sizeLimitBreach('/', headersOfSize(API_GATEWAY_LIMITS.headerBytes))).toBeNull();
    expect(sizeLimitBreach('/', headersOfSize(API_GATEWAY_LIMITS.headerBytes + 1))).toEqual({ status: 431, message: 'Request header fields too large.' });
    // Latin-1 characters are one byte each on the wire (Node decodes header bytes as latin1).
    expect(sizeLimitBreach('/', ['x', 'é'.repeat(10_000)])).toBeNull();
  });

  it('refuses a method ARN over 1,600 bytes with 414', () => {
    expect(methodArnTooLong(`arn:${'a'.repeat(1_596)}`)).toBeNull();
    expect(methodArnTooLong(`arn:${'a'.repeat(1_597)}`)).toEqual({ status: 414, message: 'Request URI too long.' });
  });
});

describe('rawEnvelopeResponse', () => {
  it('is a complete HTTP/1.1 response with the envelope, its length, and CORS only for the Embed API', () => {
    const embed = rawEnvelopeResponse(431, 'Request header fields too large.', true);
    const [head, body] = embed.split('\r\n\r\n');
    expect(head!.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(head).toContain('content-type: application/json');
    expect(head).toContain('access-control-allow-origin: *');
    expect(head).toContain(`content-length: ${Buffer.byteLength(body!)}`);
    expect(JSON.parse(body!)).toEqual({ success: false, message: 'Request header fields too large.' });
    expect(rawEnvelopeResponse(400, 'Bad request.', false)).not.toMatch(/access-control/i);
    expect(rawEnvelopeResponse(400, 'Bad request.', false, true).endsWith('\r\n\r\n')).toBe(true); // HEAD: no body
  });
});
