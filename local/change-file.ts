/**
 * Applies a JSON Lines file of change records (PRODUCT P14) in file order:
 * blank lines are ignored, a line that is not a valid record is reported with
 * its line number and field path and skipped, every other line goes through
 * the applier. Used by `npm run data:apply` and its tests.
 */
import { changeSubject, parseChangeLine } from '../lambdas/core/changes.js';
import type { ChangeApplier } from '../lambdas/store/applier.js';

export interface ChangeFileReport {
  applied: number;
  stale: number;
  waiting: number;
  invalid: number;
  /** One line per problem: `line 7: event.start_date: invalid date-time`, `line 9: waiting for user usr_x`. */
  problems: string[];
  /** One line per stale change (not an error, but named so a reader can find it): `line 6: stale, event evt_x already at version 4`. */
  staleLines: string[];
  writes: number;
}

export async function applyChangeFile(applier: ChangeApplier, text: string): Promise<ChangeFileReport> {
  const report: ChangeFileReport = { applied: 0, stale: 0, waiting: 0, invalid: 0, problems: [], staleLines: [], writes: 0 };
  const lines = text.split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    const parsed = parseChangeLine(line);
    if (parsed === null) continue;
    const n = index + 1;
    if (!parsed.ok) {
      report.invalid++;
      report.problems.push(...parsed.problems.map((p) => `line ${n}: ${p}`));
      continue;
    }
    const outcome = await applier.apply(parsed.change);
    report.writes += outcome.writes;
    report[outcome.result]++;
    if (outcome.result === 'waiting') report.problems.push(`line ${n}: not applied, waiting for ${outcome.missing} (unknown or deleted)`);
    if (outcome.result === 'stale') {
      const entity = `${parsed.change.type.split('.')[0]} ${changeSubject(parsed.change)}`;
      report.staleLines.push(`line ${n}: stale, version ${parsed.change.version} is not newer than ${outcome.storedVersion} (${entity}); nothing changed`);
    }
  }
  return report;
}

/** Exit status of data:apply: 0 when every line was applied or stale (PRODUCT P14). */
export const exitStatus = (r: ChangeFileReport): 0 | 1 => (r.waiting === 0 && r.invalid === 0 ? 0 : 1);

export function formatReport(r: ChangeFileReport): string {
  return [`applied: ${r.applied}`, `stale: ${r.stale}`, `waiting: ${r.waiting}`, `invalid: ${r.invalid}`].join('\n');
}

/** The summary's first line: what was applied, said as it is (nothing, when nothing was). */
export function headline(r: ChangeFileReport, file: string, table: string): string {
  const total = r.applied + r.stale + r.waiting + r.invalid;
  if (total === 0) return `No change records in ${file}: nothing to apply to ${table}`;
  const changes = total === 1 ? 'change record' : 'change records';
  if (r.applied === 0) return `Applied none of the ${total} ${changes} in ${file} to ${table}`;
  return `Applied ${r.applied} of the ${total} ${changes} in ${file} to ${table}`;
}
