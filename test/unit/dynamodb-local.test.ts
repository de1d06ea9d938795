/**
 * The second store's rule (test/support/second-store.js): without Java 17 a
 * newcomer's `npm test` leaves DynamoDB Local out and ends saying which files
 * ran on dynalite only; CI (REQUIRE_DYNAMODB_LOCAL=1) and an explicit
 * `--selectProjects dynamodb-local` fail instead, naming the install command.
 * The runs themselves, without Java on the PATH: test/e2e/second-store.test.ts.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { JAVA_MISSING, assertJava } from '../support/dynamodb-local.js';
import { leftOutNotice } from '../support/second-store-reporter.js';
import { REQUIRE_VARIABLE, javaMajor, secondStore, selectedProjects } from '../support/second-store.js';
import { ROOT } from '../support/process.js';

/** A `java` that prints what a real one prints for `-version` (to stderr), or fails. */
function fakeJava(version: string | 'fails'): string {
  const file = join(mkdtempSync(join(tmpdir(), 'pe-java-')), 'java');
  writeFileSync(file, version === 'fails' ? '#!/bin/sh\nexit 1\n' : `#!/bin/sh\necho 'openjdk version "${version}" 2025-04-15' >&2\n`);
  chmodSync(file, 0o755);
  return file;
}

describe('DynamoDB Local needs Java', () => {
  it('a machine without java gets the command that installs it', () => {
    expect(() => assertJava('/nonexistent/java')).toThrow(JAVA_MISSING);
    expect(JAVA_MISSING).toContain('apt-get install -y openjdk-17-jre-headless');
    expect(JAVA_MISSING).toContain('--selectProjects dynalite');
  });

  it('a java that is not 17 or newer is refused the same way', () => {
    // `node -version` fails and prints no version: as good as no Java.
    expect(() => assertJava(process.execPath)).toThrow(JAVA_MISSING);
    expect(() => assertJava(fakeJava('11.0.2'))).toThrow(JAVA_MISSING);
    expect(() => assertJava(fakeJava('17.0.15'))).not.toThrow();
  });

  it.each([
    ['/nonexistent/java', 0],
    [process.execPath, 0],
    [fakeJava('fails'), 0],
    [fakeJava('1.8.0_402'), 1],
    [fakeJava('11.0.2'), 11],
    [fakeJava('17.0.15'), 17],
    [fakeJava('21'), 21],
  ])('javaMajor(%s) is %i', (java, major) => {
    expect(javaMajor(java)).toBe(major);
  });
});

describe('whether npm test runs the second store', () => {
  const ENVS = [undefined, '', '0', '1'];
  const ARGVS = [
    [],
    ['--selectProjects', 'dynalite'],
    ['--selectProjects', 'dynamodb-local'],
    ['--selectProjects=dynamodb-local'],
    ['--selectProjects', 'dynalite', 'dynamodb-local', '--ci'],
    ['--select-projects', 'dynamodb-local'],
    ['test/unit/dynamodb-local.test.ts'],
  ];
  const JAVAS = [0, 11, 17, 21];

  it('runs it where Java 17 is, and where it is required or asked for by name; leaves it out otherwise (every combination)', () => {
    for (const required of ENVS) {
      for (const argv of ARGVS) {
        for (const java of JAVAS) {
          const env = required === undefined ? {} : { [REQUIRE_VARIABLE]: required };
          const askedFor = argv.some((a) => a.endsWith('dynamodb-local')) && argv.some((a) => a.startsWith('--select'));
          const expected = required === '1' || askedFor || java >= 17 ? 'run' : 'leave out';
          expect({ required, argv, java, decision: secondStore({ env, argv: ['node', 'jest.js', ...argv], java: () => java }) }).toEqual({ required, argv, java, decision: expected });
        }
      }
    }
  });

  it('does not even ask for Java when the answer does not depend on it', () => {
    const java = () => {
      throw new Error('asked');
    };
    expect(secondStore({ env: { [REQUIRE_VARIABLE]: '1' }, argv: [], java })).toBe('run');
    expect(secondStore({ env: {}, argv: ['--selectProjects', 'dynamodb-local'], java })).toBe('run');
  });

  it.each(['yes', 'true', '2', ' 1'])('refuses %j as the variable (1, 0 or unset)', (value) => {
    expect(() => secondStore({ env: { [REQUIRE_VARIABLE]: value }, argv: [], java: () => 17 })).toThrow(`${REQUIRE_VARIABLE} must be 1`);
  });

  it('reads the projects jest is asked for in both spellings', () => {
    expect(selectedProjects(['node', 'jest', '--selectProjects', 'a', 'b', '--ci', 'c'])).toEqual(['a', 'b']);
    expect(selectedProjects(['--select-projects=a', '--selectProjects', 'b'])).toEqual(['a', 'b']);
    expect(selectedProjects(['test/x.test.ts', '--ci'])).toEqual([]);
  });
});

describe('the line before jest\'s summary when the second store was left out', () => {
  // As jest.config.js gives them (CHANGE_PATH_TESTS).
  const changePathTests = ['<rootDir>/test/integration/ingest.test.ts', '<rootDir>/test/integration/item-size.test.ts', '<rootDir>/test/integration/batch-write.test.ts'];
  const ran = (...files: string[]) => ({ testResults: files.map((f) => ({ testFilePath: join(ROOT, f) })) });

  it('names exactly the change-path files that ran, and how to add the store', () => {
    const line = leftOutNotice(
      { leftOut: true, changePathTests, rootDir: ROOT },
      ran('test/unit/dates.test.ts', 'test/integration/item-size.test.ts', 'test/integration/ingest.test.ts'),
    );
    expect(line).toBe(
      'No Java 17, so DynamoDB Local (the second store) did not run; 2 change-path file(s) ran on dynalite only: ' +
        'test/integration/ingest.test.ts, test/integration/item-size.test.ts. ' +
        'To add it: sudo apt-get install -y openjdk-17-jre-headless (or any Java 17+ on the PATH), then npm test again ' +
        '(REQUIRE_DYNAMODB_LOCAL=1 makes a missing Java fail the run, as in CI).',
    );
    expect(line).not.toContain('\n');
  });

  it('says nothing when the store ran, or when no change-path file did', () => {
    expect(leftOutNotice({ leftOut: false, changePathTests, rootDir: ROOT }, ran('test/integration/ingest.test.ts'))).toBeUndefined();
    expect(leftOutNotice({ leftOut: true, changePathTests, rootDir: ROOT }, ran('test/unit/dates.test.ts'))).toBeUndefined();
  });
});
