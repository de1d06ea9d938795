/**
 * What a linter would ban, without adding one: focused or skipped tests,
 * silenced type errors, `any` without a comment saying why, and domain logic
 * (lambdas/core) that runs store code.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ROOT } from '../support/process.js';

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts', '*.js', '*.mjs'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter(Boolean);

function offending(pattern: RegExp): string[] {
  return files.flatMap((file) =>
    readFileSync(`${ROOT}${file}`, 'utf8')
      .split('\n')
      .flatMap((line, i, lines) => {
        if (!pattern.test(line)) return [];
        // The ban's own definitions (this file) are not uses.
        if (file === 'test/unit/hygiene.test.ts') return [];
        return [{ file, n: i + 1, line, before: lines[i - 1] ?? '' }];
      })
      .map((hit) => `${hit.file}:${hit.n}: ${hit.line.trim()}`),
  );
}

describe('code hygiene', () => {
  // ARCHITECTURE: core is pure, DynamoDB access lives in the store. Core may name the store's item shapes (types,
  // erased at build), never import its code.
  it('core imports no store code, only its types', () => {
    const core = files.filter((f) => f.startsWith('lambdas/core/'));
    const hits = core.flatMap((file) =>
      [...readFileSync(`${ROOT}${file}`, 'utf8').matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+'\.\.\/store\/[^']*'/gms)].map((m) => `${file}: ${m[0].replace(/\s+/g, ' ')}`),
    );
    expect(core.length).toBeGreaterThan(10);
    expect(hits).toEqual([]);
  });

  // No import back up a floor: what a deployed Lambda runs lives under lambdas/ (esbuild bundles from there), and the
  // web product's kit in keys/ (its signed client and example) stands alone. The operator CLIs live in local/cli/.
  it.each([
    ['lambdas/', 'lambdas/'],
    ['keys/', 'keys/'],
  ])('files under %s import nothing from outside %s', (folder, allowed) => {
    const inFolder = files.filter((f) => f.startsWith(folder) && f.endsWith('.ts'));
    const hits = inFolder.flatMap((file) =>
      [...readFileSync(`${ROOT}${file}`, 'utf8').matchAll(/^(?:import|export)\b[^;]*?from\s+'(\.{1,2}\/[^']*)'|^import\s+'(\.{1,2}\/[^']*)'/gms)]
        .map((m) => (m[1] ?? m[2])!)
        .filter((spec) => !posix.join(posix.dirname(file), spec).startsWith(allowed))
        .map((spec) => `${file}: ${spec}`),
    );
    expect(inFolder.length).toBeGreaterThanOrEqual(2);
    expect(hits).toEqual([]);
  });

  it('has no focused or skipped tests', () => {
    expect(offending(/\b(it|test|describe)\.(only|skip|todo)\(|\bx(it|test|describe)\(|\bf(it|describe)\(/)).toEqual([]);
  });

  it('silences no type error', () => {
    expect(offending(/@ts-(ignore|nocheck|expect-error)/)).toEqual([]);
  });

  it('uses `any` only with a comment on the line before saying why', () => {
    const hits = files.flatMap((file) => {
      const lines = readFileSync(`${ROOT}${file}`, 'utf8').split('\n');
      return lines.flatMap((line, i) =>
        /(:\s*any\b|<any>|\bas any\b|\bany\[\]|,\s*any>)/.test(line) && !/^\s*(\/\/|\*)/.test(lines[i - 1] ?? '') && file !== 'test/unit/hygiene.test.ts'
          ? [`${file}:${i + 1}: ${line.trim()}`]
          : [],
      );
    });
    expect(hits).toEqual([]);
  });
});
