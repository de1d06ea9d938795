/**
 * DynamoDB Streams for the rehearsal: the table's stream (its
 * StreamSpecification in the template) as the records Lambda's event source
 * mapping reads from it, and the mapping's filter (FilterCriteria) applied as
 * Lambda applies it before invoking anything.
 *
 * - A record per write the store answered 200 (dynalite's tap,
 *   local/dynalite.ts), after the rehearsal's own load, in the order the
 *   writes were answered, with an increasing sequence number and the keys
 *   the stream's view type gives (KEYS_ONLY: the keys alone). AWS writes no
 *   record for a write that changed nothing ("Change data capture for
 *   DynamoDB Streams"); this stand-in writes one for every write answered,
 *   so it may wake a function more often, never less. The event's name is
 *   `MODIFY` for a put or an update and `REMOVE` for a delete (the store's
 *   tap does not say which puts were inserts).
 * - The filter: Lambda's event-filtering rule syntax on the record's
 *   `dynamodb` key ("Control which events Lambda sends to your function",
 *   "Filter rule syntax"): exact values, `prefix`, `suffix`,
 *   `equals-ignore-case`, `anything-but`, `exists`, each field's rules an
 *   OR, the pattern's fields an AND, the filters of a mapping an OR. A rule
 *   this stand-in does not know (`numeric`, `wildcard`, a CIDR) fails the
 *   rehearsal's start, naming it, never a guess.
 */
import { TemplateError, type Json } from './template.js';

export interface StreamRecord {
  readonly eventID: string;
  readonly eventName: 'MODIFY' | 'REMOVE';
  readonly dynamodb: { Keys: Record<string, { S: string }>; SequenceNumber: string; SizeBytes: number; StreamViewType: string; ApproximateCreationDateTime: number };
}

const KNOWN_RULES = new Set(['prefix', 'suffix', 'equals-ignore-case', 'anything-but', 'exists']);

/** Throws naming the first rule the matcher does not interpret. */
export function checkPattern(pattern: Json, where: string): void {
  for (const [field, value] of Object.entries(pattern ?? {})) {
    if (Array.isArray(value)) {
      for (const rule of value) {
        if (rule && typeof rule === 'object' && !Object.keys(rule).every((k) => KNOWN_RULES.has(k))) throw new TemplateError(where, `filter rule ${JSON.stringify(rule)} of ${field} is not rehearsed`);
      }
    } else if (value && typeof value === 'object') checkPattern(value, where);
    else throw new TemplateError(where, `filter field ${field} must be an object or a list of rules`);
  }
}

function ruleMatches(rule: Json, value: unknown, present: boolean): boolean {
  if (rule === null || typeof rule !== 'object') return present && value === rule;
  if ('exists' in rule) return rule.exists === present;
  if (!present) return false;
  if ('prefix' in rule) return typeof value === 'string' && value.startsWith(String(rule.prefix));
  if ('suffix' in rule) return typeof value === 'string' && value.endsWith(String(rule.suffix));
  if ('equals-ignore-case' in rule) return typeof value === 'string' && value.toLowerCase() === String(rule['equals-ignore-case']).toLowerCase();
  if ('anything-but' in rule) {
    const but = rule['anything-but'];
    if (but && typeof but === 'object' && !Array.isArray(but)) return !ruleMatches(but, value, present);
    return ![but].flat().includes(value);
  }
  return false;
}

/** Whether `event` matches `pattern` (a parsed Filter's Pattern). */
export function matchesPattern(pattern: Json, event: unknown): boolean {
  return Object.entries(pattern ?? {}).every(([field, rules]) => {
    const obj = event as Record<string, unknown> | undefined;
    const present = !!obj && typeof obj === 'object' && field in obj;
    const value = present ? obj[field] : undefined;
    if (Array.isArray(rules)) {
      const values = Array.isArray(value) ? value : [value];
      return rules.some((rule) => values.some((v) => ruleMatches(rule, v, present)));
    }
    return present && matchesPattern(rules, value);
  });
}

/** A mapping's FilterCriteria as patterns (none: every record passes). */
export function filterPatterns(criteria: Json, where: string): Json[] {
  const patterns = ((criteria?.Filters ?? []) as Json[]).map((f) => JSON.parse(String(f.Pattern)) as Json);
  for (const p of patterns) checkPattern(p, where);
  return patterns;
}

export const passesFilters = (patterns: readonly Json[], record: StreamRecord): boolean => patterns.length === 0 || patterns.some((p) => matchesPattern(p, record));

/** The table's stream: records appended by the store's tap, read by each mapping from where it stopped. */
export class TableStream {
  readonly records: StreamRecord[] = [];
  private sequence = 10n ** 20n;

  constructor(
    readonly viewType: string,
    private readonly now: () => Date,
  ) {
    if (viewType !== 'KEYS_ONLY') throw new TemplateError('StreamSpecification', `stream view ${viewType} is not rehearsed (KEYS_ONLY is)`);
  }

  append(keys: { pk: string; sk: string }[], removed: boolean): void {
    for (const k of keys) {
      this.sequence += 1n;
      const Keys = { pk: { S: k.pk }, sk: { S: k.sk } };
      this.records.push({
        eventID: this.sequence.toString(16),
        eventName: removed ? 'REMOVE' : 'MODIFY',
        dynamodb: { Keys, SequenceNumber: this.sequence.toString(), SizeBytes: JSON.stringify(Keys).length, StreamViewType: this.viewType, ApproximateCreationDateTime: Math.floor(this.now().getTime() / 1000) },
      });
    }
  }
}
