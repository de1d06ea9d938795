import { describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { legacyRedirectTarget, searchOf } from '../../lambdas/core/legacy-prefix.js';
import { redirect } from '../../lambdas/handlers/legacy-redirect.js';

describe('the old /api/ext/v1 prefix (PRODUCT P15)', () => {
  it.each([
    ['/api/ext/v1/events/evt_jazz01', '?a=1', '/api/public/v1/events/evt_jazz01?a=1'],
    ['/api/ext/v1', '', '/api/public/v1'],
    ['/api/ext/v1/', '', '/api/public/v1/'],
    ['/staging/api/ext/v1/users/alice/events', '?type=past', '/staging/api/public/v1/users/alice/events?type=past'],
  ])('%s%s → %s', (path, search, target) => {
    expect(legacyRedirectTarget(path, search)).toBe(target);
  });

  it.each(['/api/ext/v10/events', '/api/ext/v1x', '/a/b/api/ext/v1/events', '/api/public/v1/events', '/api/embed/v1/events'])('leaves %s alone', (path) => {
    expect(legacyRedirectTarget(path, '')).toBeUndefined();
  });

  it('rebuilds the query API Gateway passes parsed, repeated values and encoding included', () => {
    expect(searchOf({ type: ['past'], tag: ['a b', 'c&d'] })).toBe('?type=past&tag=a%20b&tag=c%26d');
    expect(searchOf(null)).toBe('');
  });

  it('the Lambda answers 308 with the Location on the stage the client used', async () => {
    const event = {
      path: '/api/ext/v1/events/evt_jazz01',
      httpMethod: 'POST',
      multiValueQueryStringParameters: { limit: ['2'] },
      requestContext: { path: '/production/api/ext/v1/events/evt_jazz01' },
    } as unknown as APIGatewayProxyEvent;
    expect(await redirect(event)).toMatchObject({ statusCode: 308, headers: { location: '/production/api/public/v1/events/evt_jazz01?limit=2' }, body: '' });
  });
});
