/**
 * docs/data-model.md's access-pattern table names, per route, the IAM actions
 * of its role: the route table's `tableReads`, the one declaration the stack
 * derives each role from. This holds the column to the declaration.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { AUTHORIZER_TABLE_READS, routes } from '../../lambdas/routes.js';

const doc = readFileSync(new URL('../../docs/data-model.md', import.meta.url), 'utf8');
const documented = new Map<string, string[]>();
for (const line of doc.split('\n')) {
  const id = /^\|[^|]*\((\w+)\)\s*\|/.exec(line)?.[1];
  const cells = line.split('|').slice(1, -1);
  if (id && cells.length === 7) documented.set(id, (/^[^(]*/.exec(cells[6]!)?.[0] ?? '').split(',').map((a) => a.trim()).filter(Boolean));
}

describe('the access-pattern table states each role', () => {
  it.each(routes.filter((r) => r.tableReads.length > 0).map((r) => [r.id, r.tableReads] as const))('%s: its declared tableReads', (id, reads) => {
    expect(documented.get(id)?.sort()).toEqual(reads.map((a) => a.replace('dynamodb:', '')).sort());
  });

  it('the authorizer: its declared reads', () => {
    expect(documented.get('authorizer')).toEqual(AUTHORIZER_TABLE_READS.map((a) => a.replace('dynamodb:', '')));
  });
});
