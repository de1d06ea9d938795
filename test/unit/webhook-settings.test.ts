/**
 * The webhooks' functions' settings (lambdas/delivery/settings.ts), parsed
 * once at cold start, and the rehearsal's reading of Lambda's event filters
 * (local/rehearsal/streams.ts), which decides which stream records reach the
 * rehearsed fan-out.
 */
import { describe, expect, it } from '@jest/globals';
import { ALLOW_LOOPBACK_SETTING, WEBHOOK_ENV, guardPolicy, webhookSettings } from '../../lambdas/delivery/settings.js';
import { checkPattern, matchesPattern } from '../../local/rehearsal/streams.js';

const delivery = {
  [WEBHOOK_ENV.table]: 'events',
  [WEBHOOK_ENV.siteUrl]: 'https://events.example.com/',
  [WEBHOOK_ENV.cursorSecret]: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cursor-AbCdEf',
  [WEBHOOK_ENV.secretsKey]: 'arn:aws:kms:eu-west-1:123456789012:key/0000',
  [WEBHOOK_ENV.wakeUpQueue]: 'https://sqs.eu-west-1.amazonaws.com/123456789012/wake-ups.fifo',
};

describe("the webhooks' settings", () => {
  it('parse what the stack sets (the site without its trailing slash), loopback off', () => {
    const settings = webhookSettings('delivery', delivery);
    expect(settings[WEBHOOK_ENV.siteUrl]).toBe('https://events.example.com');
    expect(guardPolicy(settings)).toEqual({ allowLoopback: false });
  });

  it('fail the cold start naming each bad variable', () => {
    expect(() => webhookSettings('delivery', { ...delivery, [WEBHOOK_ENV.secretsKey]: 'arn:aws:secretsmanager:x', [WEBHOOK_ENV.wakeUpQueue]: undefined })).toThrow(
      new RegExp(`${WEBHOOK_ENV.secretsKey}[\\s\\S]*${WEBHOOK_ENV.wakeUpQueue}|${WEBHOOK_ENV.wakeUpQueue}[\\s\\S]*${WEBHOOK_ENV.secretsKey}`),
    );
    expect(() => webhookSettings('fanOut', { [WEBHOOK_ENV.table]: 'events' })).toThrow(WEBHOOK_ENV.fanOutQueue);
  });

  it('turn loopback receivers on only for the exact local value; any other value fails rather than being read as off or on', () => {
    expect(guardPolicy(webhookSettings('delivery', { ...delivery, [ALLOW_LOOPBACK_SETTING]: 'true' }))).toEqual({ allowLoopback: true });
    for (const value of ['1', 'yes', 'TRUE', 'false', '']) expect(() => webhookSettings('keyAdmin', { ...delivery, [ALLOW_LOOPBACK_SETTING]: value })).toThrow(ALLOW_LOOPBACK_SETTING);
  });
});

describe("the rehearsal's event filters (Lambda's rule syntax)", () => {
  const record = { eventName: 'MODIFY', dynamodb: { Keys: { pk: { S: 'FEED#EVENTS' }, sk: { S: 'H#3' } } } };
  it.each([
    [{ dynamodb: { Keys: { pk: { S: [{ prefix: 'FEED#' }] } } } }, true],
    [{ dynamodb: { Keys: { pk: { S: [{ prefix: 'EVENT#' }, 'FEED#EVENTS'] } } } }, true],
    [{ dynamodb: { Keys: { sk: { S: [{ suffix: '#3' }] } } } }, true],
    [{ eventName: [{ 'anything-but': ['REMOVE'] }] }, true],
    [{ eventName: [{ 'anything-but': { prefix: 'MOD' } }] }, false],
    [{ eventName: [{ 'equals-ignore-case': 'modify' }] }, true],
    [{ dynamodb: { NewImage: [{ exists: false }] } }, true],
    [{ dynamodb: { NewImage: [{ exists: true }] } }, false],
    [{ dynamodb: { Keys: { pk: { S: [{ prefix: 'FEED#' }] }, sk: { S: [{ prefix: 'C#' }] } } } }, false],
  ])('%j matches the record: %s', (pattern, matches) => {
    checkPattern(pattern, 'test');
    expect(matchesPattern(pattern, record)).toBe(matches);
  });

  it('refuses a rule it does not interpret, naming it, rather than guessing', () => {
    expect(() => checkPattern({ dynamodb: { SizeBytes: [{ numeric: ['>', 10] }] } }, 'Mapping1')).toThrow(/Mapping1.*numeric/);
  });
});
