import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { formatPath, validateDataset } from '../../lambdas/core/dataset.js';
import { CONTRACT_EXAMPLE, DEMO_FILE } from '../support/fixtures.js';

const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
const problemsOf = (input: unknown) => {
  const result = validateDataset(input);
  if (result.ok) throw new Error('expected problems');
  return result.problems;
};

describe('validateDataset', () => {
  it('accepts the contract example and the demo dataset', () => {
    expect(validateDataset(read(CONTRACT_EXAMPLE)).ok).toBe(true);
    expect(validateDataset(read(DEMO_FILE))).toMatchObject({ ok: true, warnings: [] });
  });

  it('names each offending record by its path', () => {
    const data = read(CONTRACT_EXAMPLE) as { events: Record<string, unknown>[]; users: Record<string, unknown>[] };
    data.events[1]!.start_date = 'next tuesday';
    data.events[0]!.status = 'live';
    data.users[2]!.nickname = 'ck';
    delete data.events[3]!.title;
    expect(problemsOf(data).sort()).toEqual(
      [
        'events[0].status: must be one of "published", "draft", "cancelled"',
        'events[1].start_date: invalid date-time',
        'events[3].title: is required',
        'users[2]: unknown field "nickname"',
      ].sort(),
    );
  });

  it('checks references and uniqueness the schema cannot express', () => {
    const data = read(CONTRACT_EXAMPLE) as Record<string, Record<string, unknown>[]>;
    data.users!.push({ id: 'usr_alice2', username: 'ALICE' });
    data.events![0]!.creator_id = 'usr_ghost';
    data.rsvps!.push({ event_id: 'evt_nope', user_id: 'usr_bob', status: 'yes', rsvp_date: '2026-01-01T00:00:00Z' });
    data.rsvps!.push({ ...data.rsvps![0]! });
    data.api_keys!.push({ ...data.api_keys![0]! });
    const problems = problemsOf(data);
    expect(problems).toEqual(
      expect.arrayContaining([
        'users[3].username: "ALICE" duplicates users[0].username ignoring case',
        'events[0].creator_id: unknown user "usr_ghost"',
        'rsvps[4].event_id: unknown event "evt_nope"',
        'rsvps[5]: duplicate RSVP of "usr_bob" to "evt_jazz01"',
        'api_keys[3].key: duplicate key',
      ]),
    );
    // A key is never echoed, not even a duplicated one.
    expect(problems.join('\n')).not.toContain('pk_demo_');
  });

  it("reports shape and reference problems in one pass, with each record's own index", () => {
    const data = read(CONTRACT_EXAMPLE) as Record<string, Record<string, unknown>[]>;
    data.rsvps![0]!.status = 'going';
    data.rsvps![1]!.user_id = 'usr_ghost';
    data.users![1]!.image = 'not a uri';
    expect(problemsOf(data)).toEqual([
      'users[1].image: invalid URI',
      'rsvps[0].status: must be one of "yes", "maybe", "no"',
      'rsvps[1].user_id: unknown user "usr_ghost"',
    ]);
  });

  it('reports a non-object or missing top-level array without throwing', () => {
    expect(problemsOf(null)).toEqual(['(root): must be object']);
    expect(problemsOf({ users: [] })).toEqual(['events: is required']);
  });

  it('warns about, but loads, what the contract allows and looks wrong', () => {
    const data = read(CONTRACT_EXAMPLE) as { events: Record<string, unknown>[] };
    data.events[0]!.timezone = 'Mars/Olympus_Mons';
    const result = validateDataset(data);
    expect(result.ok && result.warnings).toEqual([expect.stringMatching(/^events\[0\]\.timezone: /)]);
  });

  it('formats paths', () => {
    expect(formatPath(['events', 12, 'start_date'])).toBe('events[12].start_date');
    expect(formatPath([])).toBe('(root)');
  });
});
