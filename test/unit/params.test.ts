import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import * as z from 'zod';
import { ValidationError } from '../../lambdas/core/errors.js';
import {
  eventIdParam,
  eventTypeParam,
  guestStatusParam,
  limitParam,
  offsetParam,
  parseParams,
  resolveStartBounds,
  startWindowShape,
  usernameParam,
} from '../../lambdas/core/params.js';

const guests = z.object({ eventId: eventIdParam, status: guestStatusParam, limit: limitParam(10), offset: offsetParam });
const user = z.object({ username: usernameParam, type: eventTypeParam, limit: limitParam(20), offset: offsetParam, ...startWindowShape });

function failure(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('expected a ValidationError');
}

describe('parseParams', () => {
  it('applies defaults', () => {
    expect(parseParams(guests, { eventId: 'evt_1' }, null)).toEqual({ eventId: 'evt_1', status: 'yes', limit: 10, offset: 0 });
    const typed = parseParams(user, { username: 'alice' }, {});
    expect(typed).toMatchObject({ username: 'alice', limit: 20, offset: 0 });
    expect(typed.type).toBeUndefined();
  });

  it.each(['0', '101', '-1', '00', '99999999999', '-99999999999999999999'])('limit=%j, an integer out of range, is a 400 with the spec message', (limit) => {
    const error = failure(() => parseParams(guests, { eventId: 'evt_1' }, { limit }));
    expect(error.statusCode).toBe(400);
    expect(error.message).toBe('Limit must be between 1 and 100');
    expect(error.errors).toEqual([{ field: 'limit', message: 'Limit must be between 1 and 100' }]);
  });

  it.each(['abc', '1.5', '2.0', '', '1e2', ' 5', '5 ', '+5', '0x10', '١٢'])('limit=%j, not an integer, is a 400 saying it must be one', (limit) => {
    const error = failure(() => parseParams(guests, { eventId: 'evt_1' }, { limit }));
    expect(error.statusCode).toBe(400);
    expect(error.message).toBe('Limit must be an integer between 1 and 100');
    expect(error.errors).toEqual([{ field: 'limit', message: 'Limit must be an integer between 1 and 100' }]);
  });

  it('any limit string is accepted as its integer, or refused with exactly one of the two messages (fast-check)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.integer({ min: -1000, max: 1000 }).map(String), fc.stringMatching(/^-?\d{1,25}$/)), (limit) => {
        const integer = /^-?\d+$/.test(limit);
        const n = Number(limit);
        const outcome = (() => {
          try {
            return { limit: (parseParams(guests, { eventId: 'evt_1' }, { limit }) as { limit: number }).limit };
          } catch (error) {
            return { message: (error as { message: string }).message };
          }
        })();
        if (integer && n >= 1 && n <= 100) expect(outcome).toEqual({ limit: n });
        else expect(outcome).toEqual({ message: integer ? 'Limit must be between 1 and 100' : 'Limit must be an integer between 1 and 100' });
      }),
      { numRuns: 500 },
    );
  });

  it.each(['1', '100', '007'])('limit=%j is accepted', (limit) => {
    expect(parseParams(guests, { eventId: 'evt_1' }, { limit }).limit).toBe(Number(limit));
  });

  it.each(['-1', 'x', '2.0', '99999999999999999999'])('offset=%j is rejected', (offset) => {
    expect(failure(() => parseParams(guests, { eventId: 'evt_1' }, { offset })).errors[0]?.field).toBe('offset');
  });

  it('lists every failure and uses the first as the message, path parameters first', () => {
    const error = failure(() => parseParams(guests, { eventId: 'nope' }, { limit: '0', status: 'maybe-not', offset: '-3' }));
    expect(error.errors.map((e) => e.field)).toEqual(['eventId', 'status', 'limit', 'offset']);
    expect(error.message).toBe(error.errors[0]?.message);
    expect(error.errors[1]?.message).toBe('Status must be one of: yes, maybe, no, all');
  });

  it('names the allowed values of an unknown type', () => {
    expect(failure(() => parseParams(user, { username: 'a' }, { type: 'hosted' })).message).toBe('Type must be one of: upcoming, past, profile');
  });

  it.each([
    [undefined, 'Username is required'],
    ['', 'Username is required'],
    ['  ', 'Username is required'],
  ])('a missing username (%j) is "Username is required"', (username, message) => {
    expect(failure(() => parseParams(user, { username }, null)).message).toBe(message);
  });

  it.each(['@alice', 'a b', 'x'.repeat(65), 'ali/ce', 'élodie'])('username %j is invalid', (username) => {
    const error = failure(() => parseParams(user, { username }, null));
    expect(error.errors[0]?.field).toBe('username');
    expect(error.message).toMatch(/^Invalid username/);
  });

  it.each(['evt_', 'evt', 'EVT_1', 'evt_a.b', `evt_${'a'.repeat(65)}`, 'evt_%00'])('event id %j is invalid', (eventId) => {
    expect(failure(() => parseParams(guests, { eventId }, null)).errors[0]?.field).toBe('eventId');
  });

  const pathParams: Array<[string, number, (n: number) => string, z.ZodObject]> = [
    ['eventId', 68, (n) => `evt_${'a'.repeat(n - 4)}`, guests],
    ['username', 64, (n) => 'a'.repeat(n), user],
  ];
  it.each(pathParams)('a %s of its maxLength (%i) passes; longer, of any length, is the 400 envelope, not a scan', (name, max, make, schema) => {
    expect((parseParams(schema, { [name]: make(max) }, null) as Record<string, unknown>)[name]).toBe(make(max));
    for (const length of [max + 1, 10_000, 1_000_000]) {
      const error = failure(() => parseParams(schema, { [name]: make(length) }, null));
      expect(error.statusCode).toBe(400);
      expect(error.errors[0]?.field).toBe(name);
    }
  });

  it('offset is an int32: 2147483647 passes, 2147483648 and 11 digits are 400s', () => {
    expect(parseParams(guests, { eventId: 'evt_1' }, { offset: '2147483647' }).offset).toBe(2_147_483_647);
    for (const offset of ['2147483648', '99999999999', '9007199254740991']) {
      expect(failure(() => parseParams(guests, { eventId: 'evt_1' }, { offset })).errors[0]).toEqual({ field: 'offset', message: 'Offset must be an integer from 0 to 2147483647' });
    }
  });

  it('a date bound of 35 characters (nanoseconds and an offset) passes; a longer one is a 400', () => {
    expect(parseParams(user, { username: 'a' }, { since: '2026-05-01T10:00:00.123456789+02:00' }).since?.toISOString()).toBe('2026-05-01T08:00:00.123Z');
    const error = failure(() => parseParams(user, { username: 'a' }, { since: `2026-05-01T10:00:00.123456789${'0'.repeat(10_000)}Z` }));
    expect(error.errors[0]).toEqual({ field: 'since', message: 'Invalid date format. Use ISO 8601 format' });
  });

  it('a missing event id is "Event id is required"', () => {
    expect(failure(() => parseParams(guests, { eventId: '' }, null)).message).toBe('Event id is required');
  });

  it('path parameters win over a query parameter of the same name; unknown ones are ignored', () => {
    expect(parseParams(user, { username: 'alice' }, { username: '@evil', color: 'blue' }).username).toBe('alice');
  });

  it('takes any parameter name as an ordinary key: prototype names arrive as own properties (JSON-parsed, like API Gateway’s)', () => {
    const query = JSON.parse('{"__proto__":{"limit":"5"},"constructor":"1","toString":"2","valueOf":"x","hasOwnProperty":"1","limit":"3"}') as Record<string, string>;
    const path = JSON.parse('{"__proto__":"x","username":"alice"}') as Record<string, string>;
    expect(parseParams(user, path, query)).toMatchObject({ username: 'alice', limit: 3, offset: 0 });
    // A prototype name never stands in for a missing parameter.
    expect(parseParams(user, path, JSON.parse('{"__proto__":{"limit":"5"}}') as Record<string, string>).limit).toBe(20);
  });

  it.each(['since', 'from', 'to'])('%s must be ISO 8601', (name) => {
    const error = failure(() => parseParams(user, { username: 'a' }, { [name]: '01/02/2026' }));
    expect(error.message).toBe('Invalid date format. Use ISO 8601 format');
    expect(error.errors[0]?.field).toBe(name);
  });
});

describe('resolveStartBounds', () => {
  const d = (s: string) => new Date(s);
  it('treats from as an alias of since', () => {
    expect(resolveStartBounds({ from: d('2026-01-01T00:00:00Z') }).since?.toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });
  it('accepts since and from naming the same instant', () => {
    expect(resolveStartBounds({ since: d('2026-01-01T00:00:00Z'), from: d('2026-01-01T01:00:00+01:00') }).since).toBeDefined();
  });
  it('rejects since and from naming different instants, naming from', () => {
    const error = failure(() => resolveStartBounds({ since: d('2026-01-01T00:00:00Z'), from: d('2026-01-02T00:00:00Z') }));
    expect(error.errors[0]?.field).toBe('from');
  });
  it('rejects since after to', () => {
    const error = failure(() => resolveStartBounds({ since: d('2026-02-01T00:00:00Z'), to: d('2026-01-01T00:00:00Z') }));
    expect(error.statusCode).toBe(400);
    expect(error.errors[0]?.field).toBe('since');
  });
});
