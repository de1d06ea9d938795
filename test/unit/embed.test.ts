import { describe, expect, it } from '@jest/globals';
import { embedStatus, endOfLocalDay, msUntilStatusChange, toEmbedEvent } from '../../lambdas/core/embed.js';
import type { VerificationStatus } from '../../lambdas/store/table/items.js';
import { eventPayload } from '../support/payloads.js';

const at = (iso: string) => new Date(iso);
const ev = (start: string, end: string | null, timezone = 'UTC') => ({ start_date: start, end_date: end, timezone });

describe('embedStatus with an end date', () => {
  const e = ev('2027-01-15T01:00:00.000Z', '2027-01-15T04:00:00.000Z');
  it.each([
    ['2027-01-15T00:59:59.999Z', 'upcoming'],
    ['2027-01-15T01:00:00.000Z', 'ongoing'],
    ['2027-01-15T04:00:00.000Z', 'ongoing'],
    ['2027-01-15T04:00:00.001Z', 'past'],
  ])('at %s it is %s', (now, status) => {
    expect(embedStatus(e, at(now))).toBe(status);
  });
});

describe('embedStatus without an end date: ongoing until the end of the start day in the event time zone', () => {
  // 17:00Z is 18:00 in Berlin (CET): the Berlin day ends at 22:59:59.999Z.
  const berlin = ev('2026-01-10T17:00:00.000Z', null, 'Europe/Berlin');
  it.each([
    ['2026-01-10T16:59:59.999Z', 'upcoming'],
    ['2026-01-10T17:00:00.000Z', 'ongoing'],
    ['2026-01-10T22:59:59.999Z', 'ongoing'],
    ['2026-01-10T23:00:00.000Z', 'past'],
  ])('Europe/Berlin at %s: %s', (now, status) => {
    expect(embedStatus(berlin, at(now))).toBe(status);
  });

  it('uses the local day, not the UTC day (a late-evening start in Los Angeles)', () => {
    // 2026-01-10T05:00Z is 21:00 on Jan 9 in LA; the LA day ends at 2026-01-10T07:59:59.999Z.
    const la = ev('2026-01-10T05:00:00.000Z', null, 'America/Los_Angeles');
    expect(embedStatus(la, at('2026-01-10T07:59:59.999Z'))).toBe('ongoing');
    expect(embedStatus(la, at('2026-01-10T08:00:00.000Z'))).toBe('past');
  });

  it('handles days that DST makes 23 or 25 hours long', () => {
    // Europe/Berlin switches to CEST on 2026-03-29: that day ends at 21:59:59.999Z.
    expect(new Date(endOfLocalDay(Date.parse('2026-03-29T00:30:00Z'), 'Europe/Berlin')).toISOString()).toBe('2026-03-29T21:59:59.999Z');
    // and back to CET on 2026-10-25: that day ends at 22:59:59.999Z.
    expect(new Date(endOfLocalDay(Date.parse('2026-10-25T00:30:00Z'), 'Europe/Berlin')).toISOString()).toBe('2026-10-25T22:59:59.999Z');
    // Zones east of UTC by fractions of an hour too.
    expect(new Date(endOfLocalDay(Date.parse('2026-05-01T10:00:00Z'), 'Asia/Kathmandu')).toISOString()).toBe('2026-05-01T18:14:59.999Z');
  });

  it('treats an unknown time zone as UTC', () => {
    expect(new Date(endOfLocalDay(Date.parse('2026-05-01T10:00:00Z'), 'Mars/Olympus')).toISOString()).toBe('2026-05-01T23:59:59.999Z');
  });
});

describe('msUntilStatusChange', () => {
  const e = ev('2027-01-15T01:00:00.000Z', '2027-01-15T04:00:00.000Z');
  it('counts down to the start, then to just after the end, then stops', () => {
    expect(msUntilStatusChange(e, at('2027-01-15T00:59:00.000Z'))).toBe(60_000);
    expect(msUntilStatusChange(e, at('2027-01-15T03:59:00.000Z'))).toBe(60_001);
    expect(msUntilStatusChange(e, at('2027-01-15T05:00:00.000Z'))).toBeNull();
  });
});

describe('toEmbedEvent', () => {
  const payload = eventPayload({
    end_date: null,
    timezone: 'UTC',
    cost: 3,
    links: { spotify_url: 'https://s', wavlake_url: null },
    contributions: { cashapp: '$x', venmo: null, paypal: null, btc_lightning: null },
    creator: { id: 'usr_a', username: 'Ann', image: null, verification_status: 'id_verified' },
  });

  it('keeps nulls, builds the url, flattens verification and drops rich fields', () => {
    expect(toEmbedEvent(payload, at('2026-01-01T00:00:00Z'), 'https://site.example')).toEqual({
      id: 'evt_a',
      title: 'A',
      description: null,
      cover: null,
      start_date: '2027-01-15T01:00:00.000Z',
      end_date: null,
      timezone: 'UTC',
      location: null,
      url: 'https://site.example/e/evt_a',
      creator: { username: 'Ann', image: null, verified: true },
      status: 'upcoming',
    });
  });

  it.each<[VerificationStatus, boolean]>([
    [null, false],
    ['verified', true],
    ['id_verified', true],
  ])('verification %s → verified %s', (verification_status, verified) => {
    expect(toEmbedEvent({ ...payload, creator: { ...payload.creator, verification_status } }, at('2026-01-01T00:00:00Z'), 'https://s').creator.verified).toBe(verified);
  });
});
