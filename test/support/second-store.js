/**
 * Whether `npm test` runs its second store, DynamoDB Local (a Java program),
 * and what it says when it does not. Plain JavaScript: jest.config.js imports
 * it natively, before any transform exists; test/support/dynamodb-local.ts and
 * the reporter beside this file import it too, so there is one Java check.
 *
 * - Java 17 or newer on the PATH: the "dynamodb-local" project runs.
 * - No Java: the project is left out, and the run ends with one line naming
 *   the change-path files that ran on dynalite only and how to add the second
 *   store (second-store-reporter.js). A newcomer's `npm test` passes.
 * - REQUIRE_DYNAMODB_LOCAL=1 (.ci/run sets it, with the JRE it installs), or
 *   the project asked for by name (`--selectProjects dynamodb-local`): the
 *   project stays, and its global setup fails the run at once saying how to
 *   install Java. CI never passes without the second store.
 */
import { spawnSync } from 'node:child_process';

/** The variable that makes a missing Java a failure instead of a note. */
export const REQUIRE_VARIABLE = 'REQUIRE_DYNAMODB_LOCAL';

export const PROJECT = 'dynamodb-local';

export const INSTALL_JAVA = 'sudo apt-get install -y openjdk-17-jre-headless';

export const JAVA_MISSING =
  'DynamoDB Local needs Java 17 or newer, and `java` was not found (or is older). ' +
  `Install it with \`${INSTALL_JAVA}\` (Debian/Ubuntu; .ci/run does this in CI), ` +
  'or run only the dynalite tests with `npm test -- --selectProjects dynalite`.';

/** The major version `java -version` reports (`java` is a parameter for the tests), 0 when there is no usable Java. */
export function javaMajor(java = 'java') {
  const run = spawnSync(java, ['-version'], { encoding: 'utf8' });
  if (run.error || run.status !== 0) return 0;
  return Number(/version "(\d+)/.exec(`${run.stderr ?? ''}${run.stdout ?? ''}`)?.[1] ?? 0);
}

/** The projects named by `--selectProjects a b` / `--select-projects=a` in jest's command line. */
export function selectedProjects(argv) {
  const names = [];
  for (let i = 0; i < argv.length; i++) {
    const m = /^--select-?[pP]rojects(?:=(.*))?$/.exec(argv[i]);
    if (!m) continue;
    if (m[1] !== undefined) names.push(m[1]);
    else for (let j = i + 1; j < argv.length && !argv[j].startsWith('-'); j++) names.push(argv[j]);
  }
  return names;
}

/**
 * 'run' or 'leave out' the second store. `env`, `argv` and `javaMajor` are the
 * process's own unless given (the tests give them).
 */
export function secondStore({ env = process.env, argv = process.argv, java = () => javaMajor() } = {}) {
  return optionalProject({ env, argv, project: PROJECT, variable: REQUIRE_VARIABLE, missing: 'Java', present: () => java() >= 17 });
}

/**
 * The rule of a project that needs something the machine may lack (the second store's Java, the browser
 * tests' Chromium: browser.js): 'run' when `variable` is 1 or the project is asked for by name (then a missing
 * `missing` fails the run in the project's global setup), else 'run' where `present()` and 'leave out' where
 * not. `present` is asked only when the answer depends on it.
 */
export function optionalProject({ env, argv, project, variable, missing, present }) {
  const required = env[variable];
  if (required !== undefined && required !== '' && required !== '0' && required !== '1') {
    throw new Error(`${variable} must be 1 (a missing ${missing} fails the run), 0 or unset, not ${JSON.stringify(required)}`);
  }
  if (required === '1' || selectedProjects(argv).includes(project)) return 'run';
  return present() ? 'run' : 'leave out';
}

/**
 * The one line printed when the second store was left out: `files` are the
 * change-path files that ran (on dynalite only), relative to the root.
 */
export function leftOutLine(files) {
  return (
    `No Java 17, so DynamoDB Local (the second store) did not run; ${files.length} change-path file(s) ran on dynalite only: ` +
    `${files.join(', ')}. To add it: ${INSTALL_JAVA} (or any Java 17+ on the PATH), then npm test again ` +
    `(${REQUIRE_VARIABLE}=1 makes a missing Java fail the run, as in CI).`
  );
}
