/**
 * The source dataset format (described in docs/dataset-format.md; its JSON
 * Schema, docs/dataset.schema.json, is generated from these schemas) as zod,
 * plus the cross-record checks JSON Schema cannot express (unknown references,
 * duplicates). `validateDataset` names every offending record by its path, e.g.
 * `events[12].start_date: invalid date-time`, so a bad file is fixed in one pass.
 */
import * as z from 'zod';
import { parseDateTime } from './dates.js';
import { EVENT_ID_PATTERN, USERNAME_PATTERN, USER_ID_PATTERN } from './ids.js';
import { textResponseBytes } from './response-size.js';
import { isKnownZone } from './tz-database.js';

/**
 * Stored datetimes are `toISOString()` output, which has four year digits
 * only for UTC years 0001-9999 (and sort keys rely on that width): an offset
 * can carry a valid-looking `9999-12-31T23:00:00-05:00` into year 10000, so
 * the UTC year is checked, not the written one.
 */
export const isoDateTime = z
  .string({ error: 'must be a string' })
  .refine((v) => parseDateTime(v, { requireSeconds: true }) !== null, { error: 'invalid date-time', abort: true })
  .refine((v) => inStoredRange(parseDateTime(v, { requireSeconds: true })!), { error: 'outside years 0001-9999 in UTC' })
  .meta({ format: 'date-time', description: 'ISO 8601 date-time with seconds and Z or an offset, in UTC years 0001-9999.' });

function inStoredRange(date: Date): boolean {
  const year = date.getUTCFullYear();
  return year >= 1 && year <= 9999;
}

/**
 * The longest value of every free-text field of the contracts, in the bytes
 * the text takes in an API answer as Lambda carries it
 * (lambdas/core/response-size.ts, textResponseBytes: printable ASCII 1 byte,
 * a quote or backslash 4, a newline or tab 3, anything else its UTF-8
 * bytes). Two bounds follow:
 * - answers: an event at every maximum is about 34 KB of a response, so a
 *   page of 100 of them is about 3.5 MB, well under Lambda's 6 MB
 *   (docs/performance.md, "What fits in an answer"; the rehearsal serves
 *   every list and feed at its largest);
 * - items: a text's UTF-8 bytes are at most its answer bytes, and no item
 *   holds more than one copy of a record's texts; the largest, an event's
 *   item (its texts and its creator's image, username and id), sums to
 *   ITEM_TEXT_MAX_BYTES (32,760) bytes of text, about 35 KB with its keys and
 *   attribute names, under a tenth of DynamoDB's 400 KB
 *   (docs/data-model.md, "Item sizes"; test/integration/item-size.test.ts
 *   applies a record at every maximum and measures the items).
 * Control characters other than newline and tab are refused (they are 7
 * bytes each in an answer, and no text needs them), and so are unpaired
 * surrogates (not text).
 */
export const TEXT_MAX = {
  title: 200,
  description: 20_000,
  locationName: 200,
  locationPart: 100,
  url: 2_048,
  timezone: 64,
  handle: 512,
  lightning: 2_048,
  name: 200,
  email: 320,
  phone: 64,
  reference: 128,
  keyName: 100,
  key: 512,
} as const;

/** The event item's text at every maximum (the creator's image, username and id included): the bound argued above. */
export const ITEM_TEXT_MAX_BYTES =
  TEXT_MAX.title + TEXT_MAX.description + TEXT_MAX.locationName + 2 * TEXT_MAX.locationPart + 4 * TEXT_MAX.url + TEXT_MAX.timezone + 3 * TEXT_MAX.handle + TEXT_MAX.lightning + 2 * TEXT_MAX.reference + 64;

/** Every control character (C0, DEL, C1) but newline and tab. */
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/;
/** A surrogate that is not half of a pair. */
const UNPAIRED = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export const TEXT_ERRORS = {
  control: 'must not contain control characters other than newline and tab',
  unpaired: 'must be text (an unpaired surrogate is not)',
  tooLong: (max: number) => `must be at most ${max} bytes as an answer carries it (a quote or backslash counts 4, a newline or tab 3, other characters their UTF-8 bytes)`,
};
/**
 * A text of at most `max` answer bytes, refused with the bound named. The
 * length check first (a text longer in code units is longer in bytes), so
 * the JSON Schema states a maxLength and no huge text is escaped to count it.
 */
function bounded<T extends z.ZodString | z.ZodURL>(schema: T, max: number): T {
  return schema
    .max(max, { error: TEXT_ERRORS.tooLong(max) })
    .refine((v) => !CONTROL.test(v), { error: TEXT_ERRORS.control, abort: true })
    .refine((v) => !UNPAIRED.test(v), { error: TEXT_ERRORS.unpaired, abort: true })
    .refine((v) => textResponseBytes(v) <= max, { error: TEXT_ERRORS.tooLong(max) }) as unknown as T;
}
export const text = (max: number) => bounded(z.string({ error: 'must be a string' }), max);
const uri = bounded(z.url({ error: 'invalid URI' }), TEXT_MAX.url);
const uriOrNull = uri.nullable();
const textOrNull = (max: number) => bounded(z.string({ error: 'must be a string or null' }), max).nullable();
const reference = text(TEXT_MAX.reference);

export const userSchema = z.strictObject({
  id: z.string().regex(USER_ID_PATTERN, { error: 'must match usr_ followed by 1-64 of [A-Za-z0-9_-]' }),
  username: z.string().regex(USERNAME_PATTERN, { error: 'must be 1-64 of [A-Za-z0-9_.-]' }),
  name: textOrNull(TEXT_MAX.name).optional(),
  image: uriOrNull.optional(),
  verification_status: z.enum(['verified', 'id_verified']).nullable().optional(),
  email: textOrNull(TEXT_MAX.email).optional(),
  phone: textOrNull(TEXT_MAX.phone).optional(),
});

export const eventSchema = z.strictObject({
  id: z.string().regex(EVENT_ID_PATTERN, { error: 'must match evt_ followed by 1-64 of [A-Za-z0-9_-]' }),
  creator_id: reference,
  title: text(TEXT_MAX.title),
  description: textOrNull(TEXT_MAX.description).optional(),
  cover: uriOrNull.optional(),
  location: z
    .strictObject({ name: text(TEXT_MAX.locationName), city: textOrNull(TEXT_MAX.locationPart).optional(), country: textOrNull(TEXT_MAX.locationPart).optional() })
    .nullable()
    .optional(),
  start_date: isoDateTime,
  end_date: isoDateTime.nullable().optional(),
  // The contract only says "string"; an unknown zone is a warning (see below), not a refusal.
  timezone: text(TEXT_MAX.timezone),
  status: z.enum(['published', 'draft', 'cancelled']),
  visibility: z.enum(['public', 'private', 'unlisted']),
  cost: z.number().min(0).nullable().optional(),
  created_at: isoDateTime,
  links: z.strictObject({ spotify_url: uriOrNull.optional(), wavlake_url: uriOrNull.optional() }).optional(),
  contributions: z
    .strictObject({
      cashapp: textOrNull(TEXT_MAX.handle).optional(),
      venmo: textOrNull(TEXT_MAX.handle).optional(),
      paypal: textOrNull(TEXT_MAX.handle).optional(),
      btc_lightning: textOrNull(TEXT_MAX.lightning).optional(),
    })
    .optional(),
});

export const rsvpSchema = z.strictObject({
  event_id: reference,
  user_id: textOrNull(TEXT_MAX.reference).optional(),
  status: z.enum(['yes', 'maybe', 'no']),
  rsvp_date: isoDateTime,
  name: textOrNull(TEXT_MAX.name).optional(),
  email: textOrNull(TEXT_MAX.email).optional(),
  phone: textOrNull(TEXT_MAX.phone).optional(),
});

export const SCOPES = ['events:read', 'guests:read'] as const;
export type Scope = (typeof SCOPES)[number];

export const apiKeySchema = z.strictObject({
  key: bounded(z.string().min(20, { error: 'must be at least 20 characters' }), TEXT_MAX.key),
  user_id: reference,
  name: text(TEXT_MAX.keyName),
  scopes: z.array(z.enum(SCOPES)).optional(),
  revoked: z.boolean().optional(),
});

/** The whole document (used for the Dataset type; validation goes record by record). */
export const datasetSchema = z.strictObject({
  users: z.array(userSchema),
  events: z.array(eventSchema),
  rsvps: z.array(rsvpSchema).optional(),
  api_keys: z.array(apiKeySchema).optional(),
});

export type SourceUser = z.infer<typeof userSchema>;
export type SourceEvent = z.infer<typeof eventSchema>;
export type SourceRsvp = z.infer<typeof rsvpSchema>;
export type SourceApiKey = z.infer<typeof apiKeySchema>;
export type Dataset = z.infer<typeof datasetSchema>;

/**
 * Whether `tz` names a zone of the project's time-zone database (any letter
 * case; lambdas/core/tz-database.ts), the same answer on every runtime: an
 * offset such as "+05:30" is none (Intl on Node 22.23 and later accepts it,
 * Node 20 does not), so it reads as UTC everywhere, as the loader warns.
 */
export function isIanaTimeZone(tz: string): boolean {
  return isKnownZone(tz);
}
/** `['events', 12, 'start_date']` → `events[12].start_date` */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || '(root)';
}

export function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'is required' : `must be ${issue.expected}`;
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return issue.message;
  }
}

export type DatasetResult =
  | { ok: true; dataset: Dataset; warnings: string[] }
  | { ok: false; problems: string[] };

const topLevelSchema = z.strictObject({
  users: z.array(z.unknown()),
  events: z.array(z.unknown()),
  rsvps: z.array(z.unknown()).optional(),
  api_keys: z.array(z.unknown()).optional(),
});

export function issuesToProblems(issues: z.core.$ZodIssue[], prefix: PropertyKey[] = []): string[] {
  return issues.map((i) => `${formatPath([...prefix, ...i.path])}: ${describeIssue(i)}`);
}

interface Indexed<T> {
  index: number;
  record: T;
}

/** Parses each record on its own, so one bad record does not hide the others. */
function parseRecords<T>(name: string, raw: unknown[] | undefined, schema: z.ZodType<T>, problems: string[]): Indexed<T>[] {
  const valid: Indexed<T>[] = [];
  (raw ?? []).forEach((record, index) => {
    const parsed = schema.safeParse(record, { reportInput: true });
    if (parsed.success) valid.push({ index, record: parsed.data });
    else problems.push(...issuesToProblems(parsed.error.issues, [name, index]));
  });
  return valid;
}

/** Ids of raw records, valid or not, so a reference to an invalid record is not reported twice. */
const rawIds = (raw: unknown[] | undefined): Set<string> =>
  new Set(
    (raw ?? []).flatMap((r) => {
      const id = r !== null && typeof r === 'object' ? (r as { id?: unknown }).id : undefined;
      return typeof id === 'string' ? [id] : [];
    }),
  );

/**
 * Validates every record's shape, then references and uniqueness, and reports
 * all problems in one pass, each by its path in the file. Never throws for bad
 * input. Problems refuse the file; warnings are things the contract allows but
 * that look wrong (printed, and the data is loaded as given).
 */
export function validateDataset(input: unknown): DatasetResult {
  const top = topLevelSchema.safeParse(input, { reportInput: true });
  if (!top.success) return { ok: false, problems: issuesToProblems(top.error.issues) };
  const problems: string[] = [];
  const warnings: string[] = [];
  const users = parseRecords('users', top.data.users, userSchema, problems);
  const events = parseRecords('events', top.data.events, eventSchema, problems);
  const rsvps = parseRecords('rsvps', top.data.rsvps, rsvpSchema, problems);
  const apiKeys = parseRecords('api_keys', top.data.api_keys, apiKeySchema, problems);
  const userIds = rawIds(top.data.users);
  const eventIds = rawIds(top.data.events);

  const seenUsers = new Set<string>();
  const usernames = new Map<string, number>();
  for (const { index: i, record: u } of users) {
    if (seenUsers.has(u.id)) problems.push(`users[${i}].id: duplicate user id "${u.id}"`);
    seenUsers.add(u.id);
    const first = usernames.get(u.username.toLowerCase());
    if (first !== undefined) problems.push(`users[${i}].username: "${u.username}" duplicates users[${first}].username ignoring case`);
    else usernames.set(u.username.toLowerCase(), i);
  }

  const seenEvents = new Set<string>();
  for (const { index: i, record: e } of events) {
    if (seenEvents.has(e.id)) problems.push(`events[${i}].id: duplicate event id "${e.id}"`);
    seenEvents.add(e.id);
    if (!userIds.has(e.creator_id)) problems.push(`events[${i}].creator_id: unknown user "${e.creator_id}"`);
    if (e.end_date && Date.parse(e.end_date) < Date.parse(e.start_date)) warnings.push(`events[${i}].end_date: is before start_date`);
    if (!isIanaTimeZone(e.timezone)) {
      warnings.push(`events[${i}].timezone: "${e.timezone}" is not a known IANA time zone; UTC is used for day boundaries`);
    }
  }

  const rsvpPairs = new Set<string>();
  for (const { index: i, record: r } of rsvps) {
    if (!eventIds.has(r.event_id)) problems.push(`rsvps[${i}].event_id: unknown event "${r.event_id}"`);
    if (r.user_id == null) continue;
    if (!userIds.has(r.user_id)) problems.push(`rsvps[${i}].user_id: unknown user "${r.user_id}"`);
    const pair = `${r.event_id}\u0000${r.user_id}`;
    if (rsvpPairs.has(pair)) problems.push(`rsvps[${i}]: duplicate RSVP of "${r.user_id}" to "${r.event_id}"`);
    rsvpPairs.add(pair);
  }

  const seenKeys = new Set<string>();
  for (const { index: i, record: k } of apiKeys) {
    if (!userIds.has(k.user_id)) problems.push(`api_keys[${i}].user_id: unknown user "${k.user_id}"`);
    // Never echo a key, even a duplicated one, into output.
    if (seenKeys.has(k.key)) problems.push(`api_keys[${i}].key: duplicate key`);
    seenKeys.add(k.key);
  }

  if (problems.length) return { ok: false, problems };
  const records = <T>(list: Indexed<T>[]) => list.map((x) => x.record);
  const dataset: Dataset = {
    users: records(users),
    events: records(events),
    ...(top.data.rsvps ? { rsvps: records(rsvps) } : {}),
    ...(top.data.api_keys ? { api_keys: records(apiKeys) } : {}),
  };
  return { ok: true, dataset, warnings };
}
