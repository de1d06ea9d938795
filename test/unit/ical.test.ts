/**
 * The iCalendar rendering, read back with an independent parser (ical.js):
 * every value survives, times are the right instants in UTC (also across DST
 * changes and without an end date), lines are CRLF and folded at 75 octets.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import ICAL from 'ical.js';
import { endOfLocalDay } from '../../lambdas/core/embed.js';
import { calendarEnd, locationText, plainText } from '../../lambdas/core/calendar-view.js';
import { sequenceOf, toICalendar } from '../../lambdas/core/ical.js';
import type { EventPayload } from '../../lambdas/store/table/items.js';
import { eventPayload } from '../support/payloads.js';

const SITE = 'https://events.example';

interface Parsed {
  uid: string;
  summary: string;
  description: string | null;
  location: string | null;
  url: string | null;
  start: string;
  end: string;
  startIsUtc: boolean;
  stamp: string;
  sequence: number;
}

function parse(text: string): { calendar: ICAL.Component; events: Parsed[] } {
  const calendar = new ICAL.Component(ICAL.parse(text));
  const events = calendar.getAllSubcomponents('vevent').map((v) => {
    const e = new ICAL.Event(v);
    const text = (name: string) => {
      const value = v.getFirstPropertyValue(name);
      return value === null ? null : String(value);
    };
    return {
      uid: e.uid,
      summary: e.summary,
      description: text('description'),
      location: text('location'),
      url: text('url'),
      start: e.startDate.toJSDate().toISOString(),
      end: e.endDate.toJSDate().toISOString(),
      startIsUtc: e.startDate.zone === ICAL.Timezone.utcTimezone,
      stamp: (v.getFirstPropertyValue('dtstamp') as ICAL.Time).toJSDate().toISOString(),
      sequence: Number(v.getFirstPropertyValue('sequence')),
    };
  });
  return { calendar, events };
}

describe('toICalendar', () => {
  it('writes every field, read back identically by ical.js', () => {
    const e = eventPayload({
      title: 'Rooftop Jazz',
      description: '**Live** jazz.',
      location: { name: 'Skyline Terrace', city: 'Austin', country: 'US' },
    });
    const { calendar, events } = parse(toICalendar([e], { name: 'Events by Ann', siteUrl: SITE }));
    expect(calendar.getFirstPropertyValue('version')).toBe('2.0');
    expect(calendar.getFirstPropertyValue('prodid')).toBe('-//Public Events API//Embed feed//EN');
    expect(calendar.getFirstPropertyValue('x-wr-calname')).toBe('Events by Ann');
    expect(events).toEqual([
      {
        uid: 'evt_a@events.example',
        summary: 'Rooftop Jazz',
        description: '**Live** jazz.',
        location: 'Skyline Terrace, Austin, US',
        url: 'https://events.example/e/evt_a',
        start: '2027-01-15T01:00:00.000Z',
        end: '2027-01-15T04:00:00.000Z',
        startIsUtc: true,
        stamp: '2026-01-01T00:00:00.000Z',
        sequence: 0,
      },
    ]);
  });

  it('uses CRLF only, folds at 75 octets and never splits a UTF-8 character', () => {
    const long = `${'Ünïcödé 🎷 '.repeat(40)}, ; \\ end`;
    const text = toICalendar([eventPayload({ title: long, description: long })], { name: 'x', siteUrl: SITE });
    expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    const lines = text.split('\r\n');
    for (const line of lines) expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(75);
    // No replacement characters: every fold fell between characters.
    expect(text).not.toContain('\uFFFD');
    expect(lines.some((l) => l.startsWith(' '))).toBe(true);
    expect(parse(text).events[0]?.summary).toBe(long);
  });

  it('escapes commas, semicolons, backslashes and newlines in TEXT values', () => {
    const text = toICalendar([eventPayload({ title: 'a,b;c\\d', description: 'line 1\nline 2\r\nline 3' })], { name: 'x', siteUrl: SITE });
    expect(text).toContain('SUMMARY:a\\,b\\;c\\\\d\r\n');
    expect(text).toContain('DESCRIPTION:line 1\\nline 2\\nline 3\r\n');
    expect(parse(text).events[0]).toMatchObject({ summary: 'a,b;c\\d', description: 'line 1\nline 2\nline 3' });
  });

  it('round-trips any text through ical.js (property)', () => {
    // Any string without control characters other than newlines, including astral emoji.
    const textArb = fc.string({ unit: 'grapheme', maxLength: 300 }).filter((s) => s.trim() !== '' && !/[\u0000-\u0009\u000B-\u001F\u007F]/.test(s));
    fc.assert(
      fc.property(textArb, fc.option(textArb, { nil: null }), (title, description) => {
        const text = toICalendar([eventPayload({ title, description })], { name: 'x', siteUrl: SITE });
        for (const line of text.split('\r\n')) expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(75);
        const [parsed] = parse(text).events;
        // iCalendar has one line break; CR LF and CR read back as LF.
        expect(parsed?.summary).toBe(title.replace(/\r\n?/g, '\n'));
        expect(parsed?.description).toBe(description === null ? null : description.replace(/\r\n?/g, '\n'));
      }),
      { numRuns: 200 },
    );
  });

  it('leaves out what the event does not have', () => {
    const text = toICalendar([eventPayload()], { name: 'x', siteUrl: SITE });
    expect(text).not.toMatch(/^(DESCRIPTION|LOCATION|TZID)/m);
    expect(parse(text).events[0]).toMatchObject({ description: null, location: null });
  });

  it('writes the calendar history: SEQUENCE the revision count, LAST-MODIFIED and DTSTAMP its time (issue 61 item 3)', () => {
    const time = (v: ICAL.Component, name: string) => (v.getFirstPropertyValue(name) as ICAL.Time).toJSDate().toISOString();
    // Before any revision: 0, and the event's creation for both stamps.
    const loaded = parse(toICalendar([eventPayload()], { name: 'x', siteUrl: SITE })).calendar.getFirstSubcomponent('vevent')!;
    expect([loaded.getFirstPropertyValue('sequence'), time(loaded, 'last-modified'), time(loaded, 'dtstamp'), time(loaded, 'created')]).toEqual([0, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z']);
    const revised = parse(toICalendar([eventPayload({ sequence: 3, modified_at: '2026-11-21T14:30:00.000Z' })], { name: 'x', siteUrl: SITE })).calendar.getFirstSubcomponent('vevent')!;
    expect([revised.getFirstPropertyValue('sequence'), time(revised, 'last-modified'), time(revised, 'dtstamp'), time(revised, 'created')]).toEqual([3, '2026-11-21T14:30:00.000Z', '2026-11-21T14:30:00.000Z', '2026-01-01T00:00:00.000Z']);
    // SEQUENCE is an INTEGER (31 bits) whatever the item holds; something that is no count reads as none.
    expect(sequenceOf({ sequence: 2 ** 40 })).toBe(2_147_483_647);
    expect(sequenceOf({ sequence: '7' as unknown as number })).toBe(0);
    expect(sequenceOf({ sequence: -1 })).toBe(0);
  });

  it('is the same text for the same events (so the ETag holds)', () => {
    const events = [eventPayload(), eventPayload({ event_id: 'evt_b' })];
    expect(toICalendar(events, { name: 'x', siteUrl: SITE })).toBe(toICalendar(events, { name: 'x', siteUrl: SITE }));
  });
});

/** A TEXT value as RFC 5545 §3.3.11 reads it: ical.js unescapes the properties it knows, not X-WR-CALNAME. */
const unescapeText = (value: unknown) => String(value).replace(/\\([\\;,nN])/g, (_, c: string) => (c === 'n' || c === 'N' ? '\n' : c));

describe('hostile text (issue 58, s1): every property we write is TEXT escaped and folded by the one rule', () => {
  // What a user may type: the separators iCalendar gives meaning to, line breaks of every kind, lines that spell
  // properties or whole components, long multi-byte runs, and control characters no TEXT value may hold.
  const hostile = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 200 }),
    fc.array(fc.constantFrom('\n', '\r\n', '\r', ';', ',', '\\', ':', '"', 'BEGIN:VEVENT', 'END:VEVENT', 'UID:evt_victim@events.example', 'SEQUENCE:99', 'END:VCALENDAR', 'é', '🎷', '東京', '\u0000', '\u001b', '\t', ' '), { maxLength: 60 }).map((parts) => parts.join('')),
    fc.string({ unit: fc.constantFrom('é', '🎷', '東', 'ß', 'a'), minLength: 70, maxLength: 400 }),
  );
  const expectedText = (value: string) => plainText(value).replace(/\r\n?/g, '\n');

  it('one VEVENT per event with its own UID, every value read back as written, whatever the title, description, location and calendar name say (property)', () => {
    fc.assert(
      fc.property(hostile, fc.option(hostile, { nil: null }), hostile, fc.option(hostile, { nil: null }), hostile, (title, description, venue, city, place) => {
        // Calendars are named `Events in …`, `Events by …` or after the event's title (embed-feeds.ts).
        const name = `Events in ${place}`;
        const events = [eventPayload({ title, description, location: { name: venue, city, country: 'NL' } }), eventPayload({ event_id: 'evt_b', title: 'Other' })];
        const text = toICalendar(events, { name, siteUrl: SITE });
        // iCalendar's only line break is CRLF, and no line is longer than 75 octets.
        expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
        for (const line of text.split('\r\n')) expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(75);
        const { calendar, events: parsed } = parse(text);
        expect(calendar.getAllSubcomponents().map((c) => c.name)).toEqual(['vevent', 'vevent']);
        expect(parsed.map((e) => e.uid)).toEqual(['evt_a@events.example', 'evt_b@events.example']);
        expect(parsed.map((e) => e.sequence)).toEqual([0, 0]);
        expect(parsed[0]).toMatchObject({
          summary: expectedText(title),
          description: description === null ? null : expectedText(description),
          location: expectedText(locationText({ name: venue, city, country: 'NL' })!),
        });
        expect(unescapeText(calendar.getFirstPropertyValue('x-wr-calname'))).toBe(expectedText(name));
        expect(unescapeText(calendar.getFirstPropertyValue('name'))).toBe(expectedText(name));
      }),
      { numRuns: 300 },
    );
  });

  it('writes the calendar name escaped, as SUMMARY is', () => {
    const text = toICalendar([eventPayload({ title: 'a,b;c\\d\nUID:x' })], { name: 'a,b;c\\d\nUID:x', siteUrl: SITE });
    expect(text).toContain('SUMMARY:a\\,b\\;c\\\\d\\nUID:x\r\n');
    expect(text).toContain('X-WR-CALNAME:a\\,b\\;c\\\\d\\nUID:x\r\n');
    expect(text).toContain('NAME:a\\,b\\;c\\\\d\\nUID:x\r\n');
  });
});

describe('times', () => {
  it('ends an event without an end date at the end of its local start day (the Embed status rule)', () => {
    // 23:30Z on Jan 9 is 17:30 in Chicago; the Chicago day ends at 06:00Z on Jan 10.
    const e = eventPayload({ start_date: '2026-01-09T23:30:00.000Z', end_date: null, timezone: 'America/Chicago' });
    const [parsed] = parse(toICalendar([e], { name: 'x', siteUrl: SITE })).events;
    expect(parsed?.end).toBe('2026-01-10T06:00:00.000Z');
    expect(parsed?.end).toBe(new Date(endOfLocalDay(Date.parse(e.start_date), e.timezone) + 1).toISOString());
  });

  it.each([
    // The day DST starts in Berlin is 23 hours long; the day it ends in Chicago, 25.
    ['Europe/Berlin', '2026-03-29T08:00:00.000Z', '2026-03-29T22:00:00.000Z'],
    ['America/Chicago', '2026-11-01T15:00:00.000Z', '2026-11-02T06:00:00.000Z'],
    ['America/Chicago', '2026-03-08T15:00:00.000Z', '2026-03-09T05:00:00.000Z'],
  ])('across a DST change in %s, an open-ended event starting %s ends %s', (timezone, start, end) => {
    const [parsed] = parse(toICalendar([eventPayload({ start_date: start, end_date: null, timezone })], { name: 'x', siteUrl: SITE })).events;
    expect(parsed).toMatchObject({ start, end, startIsUtc: true });
  });

  it('writes UTC instants whatever the machine or the event time zone (property)', () => {
    const zones = ['UTC', 'Europe/Berlin', 'America/Chicago', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'Pacific/Chatham'];
    const instant = fc.integer({ min: Date.parse('2000-01-01'), max: Date.parse('2040-01-01') }).map((ms) => new Date(Math.floor(ms / 1000) * 1000));
    fc.assert(
      fc.property(instant, fc.integer({ min: 0, max: 10 * 24 * 3600 }), fc.constantFrom(...zones), fc.boolean(), (start, seconds, timezone, open) => {
        const e = eventPayload({
          start_date: start.toISOString(),
          end_date: open ? null : new Date(start.getTime() + seconds * 1000).toISOString(),
          timezone,
        });
        const [parsed] = parse(toICalendar([e], { name: 'x', siteUrl: SITE })).events;
        expect(parsed?.start).toBe(e.start_date);
        expect(parsed?.end).toBe(calendarEnd(e).toISOString());
      }),
      { numRuns: 200 },
    );
  });
});

describe('locationText', () => {
  it('joins the parts it has', () => {
    expect(locationText(null)).toBeNull();
    expect(locationText({ name: 'Hall', city: null, country: 'DE' })).toBe('Hall, DE');
  });
});
