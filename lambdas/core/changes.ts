/**
 * The change-record contract (one JSON object per change, PRODUCT P14): an
 * upsert carries the entity's whole current record in the dataset contract's
 * shape, a delete carries its id, every change a positive version. Mirrors
 * the contract's JSON Schema; `parseChange` names every problem by its field
 * path (`event.start_date: invalid date-time`).
 */
import * as z from 'zod';
import { TEXT_MAX, eventSchema, isoDateTime, issuesToProblems, rsvpSchema, text, userSchema } from './dataset.js';
import { EVENT_ID_PATTERN, USER_ID_PATTERN } from './ids.js';

/** An id another record points at: bounded like every text of the contract (dataset.ts, TEXT_MAX). */
const reference = text(TEXT_MAX.reference);

export const CHANGE_TYPES = ['user.upserted', 'user.deleted', 'event.upserted', 'event.deleted', 'rsvp.upserted', 'rsvp.deleted'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

const common = {
  version: z
    .number({ error: 'must be an integer' })
    .int({ error: 'must be an integer' })
    .min(1, { error: 'must be at least 1' })
    .max(Number.MAX_SAFE_INTEGER, { error: 'must be a safe integer' }),
  /** When the source made the change; informational (the ingest lag metric uses it). */
  occurred_at: isoDateTime.optional(),
};

export const changeSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('user.upserted'), ...common, user: userSchema }),
    z.strictObject({ type: z.literal('user.deleted'), ...common, user_id: z.string().regex(USER_ID_PATTERN, { error: 'must match usr_ followed by 1-64 of [A-Za-z0-9_-]' }) }),
    z.strictObject({ type: z.literal('event.upserted'), ...common, event: eventSchema }),
    z.strictObject({ type: z.literal('event.deleted'), ...common, event_id: z.string().regex(EVENT_ID_PATTERN, { error: 'must match evt_ followed by 1-64 of [A-Za-z0-9_-]' }) }),
    z.strictObject({ type: z.literal('rsvp.upserted'), ...common, rsvp: rsvpSchema }),
    z.strictObject({ type: z.literal('rsvp.deleted'), ...common, event_id: reference, user_id: reference }),
  ],
  { error: (issue) => (issue.code === 'invalid_union' ? `must be one of ${CHANGE_TYPES.map((t) => JSON.stringify(t)).join(', ')}` : undefined) },
);

export type Change = z.infer<typeof changeSchema>;

export type ParsedChange = { ok: true; change: Change } | { ok: false; problems: string[] };

export function parseChange(input: unknown): ParsedChange {
  const parsed = changeSchema.safeParse(input, { reportInput: true });
  if (parsed.success) return { ok: true, change: parsed.data };
  return { ok: false, problems: issuesToProblems(parsed.error.issues) };
}

/** One line of a JSON Lines change file: a record, nothing (blank), or its problems. */
export function parseChangeLine(line: string): ParsedChange | null {
  if (line.trim() === '') return null;
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (error) {
    return { ok: false, problems: [`invalid JSON: ${(error as Error).message}`] };
  }
  return parseChange(json);
}

/** The entity a change is about, as a stable string (logs, reports). */
export function changeSubject(change: Change): string {
  switch (change.type) {
    case 'user.upserted':
      return change.user.id;
    case 'user.deleted':
      return change.user_id;
    case 'event.upserted':
      return change.event.id;
    case 'event.deleted':
      return change.event_id;
    case 'rsvp.upserted':
      return `${change.rsvp.event_id}/${change.rsvp.user_id ?? 'anonymous'}`;
    case 'rsvp.deleted':
      return `${change.event_id}/${change.user_id}`;
  }
}
