/**
 * The cloud assembly the rehearsal serves: the app synthesized as
 * `cdk synth` does, with real esbuild bundling, into a directory under the
 * project (the bundles leave `@aws-sdk/*` external and must resolve it from
 * this project's node_modules, as the Lambda runtime resolves it from its own).
 *
 * Synthesizing bundles every function (22 esbuild runs), so an assembly
 * is kept, keyed by a hash of everything that shapes it: the sources the stack
 * and the bundles are built from, the lock file, cdk.json and the context. A
 * jest run, `npm run rehearse` and CI's two workers then bundle once per key.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { App } from 'aws-cdk-lib';
import { buildApp } from '../../lib/app.js';

const ROOT = new URL('../..', import.meta.url).pathname;
/** Under cdk.out (git-ignored), so that the bundles resolve the SDK from ROOT/node_modules. */
export const REHEARSAL_DIR = join(ROOT, 'cdk.out', 'rehearsal');
// local/rehearsal/bin: the shortcut the bundles are made through.
const SOURCES = ['lambdas', 'lib', 'bin', 'local/rehearsal/bin', 'package-lock.json', 'cdk.json'];

/**
 * cdk.json's context under the given one, as the CDK CLI merges them. Values
 * keep their JSON types: a feature flag `false` must stay false (as a string
 * it would read as set).
 */
export function withCdkJsonContext(context: Record<string, string>): Record<string, unknown> {
  const json = JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> };
  return { ...json.context, ...context };
}

export interface Assembly {
  /** The cloud assembly directory (the template and its `asset.*` directories). */
  readonly dir: string;
  readonly stackName: string;
  // `any`: CloudFormation JSON, read by the rehearsal through checked accessors (template.ts).
  readonly template: Record<string, any>;
  /** Whether this call synthesized (false: a kept assembly for the same sources and context). */
  readonly synthesized: boolean;
}

function files(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).sort().flatMap((name) => files(join(path, name)));
}

/** What the assemblies depend on besides their context: the bytes of every source file. */
function sourcesKey(): string {
  const hash = createHash('sha256');
  for (const file of SOURCES.flatMap((s) => files(join(ROOT, s)))) hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex').slice(0, 12);
}

/** `{sources}-{context}`: an assembly is kept while both are unchanged. */
export function assemblyKey(context: Record<string, unknown>, sources = sourcesKey()): string {
  const contextHash = createHash('sha256').update(JSON.stringify(Object.entries(context).sort())).digest('hex').slice(0, 8);
  return `${sources}-${contextHash}`;
}

/** Assemblies of older sources are of no use again: removed when a new one is made. */
function pruneStale(sources: string): void {
  for (const name of readdirSync(REHEARSAL_DIR)) {
    if (!name.startsWith(`${sources}-`)) rmSync(join(REHEARSAL_DIR, name), { recursive: true, force: true });
  }
}

/** local/rehearsal/bin: its `npx` runs `npx --no-install BIN` as the project's node_modules/.bin/BIN (why: the file). */
const SHORTCUT = join(ROOT, 'local', 'rehearsal', 'bin');

/**
 * `synth` (making the app and writing it) with SHORTCUT first on the PATH, so that CDK's bundling reaches esbuild without starting npm for
 * each function: the same esbuild, the same arguments, the same bundles (test/infra/synth.test.ts holds the
 * CLI's asset hashes, bundled through npx itself, equal to the rehearsal's). Synthesis is synchronous, so
 * nothing else in this process sees the changed PATH.
 */
function withBundlerShortcut<T>(synth: () => T): T {
  const path = process.env.PATH;
  process.env.PATH = `${SHORTCUT}:${path ?? ''}`;
  try {
    return synth();
  } finally {
    if (path === undefined) delete process.env.PATH;
    else process.env.PATH = path;
  }
}

/**
 * The assembly for this context (`stage` and any `-c` key of bin/app.ts),
 * synthesized with bundling unless one for the same key exists. Written to a
 * temporary directory and renamed into place, so two processes racing for
 * the same key both end with a complete assembly.
 */
export function synthesizeAssembly(context: Record<string, unknown>): Assembly {
  const sources = sourcesKey();
  const key = assemblyKey(context, sources);
  const dir = join(REHEARSAL_DIR, key);
  let synthesized = false;
  if (!existsSync(join(dir, 'manifest.json'))) {
    mkdirSync(REHEARSAL_DIR, { recursive: true });
    pruneStale(sources);
    const tmp = `${dir}.${process.pid}.tmp`;
    rmSync(tmp, { recursive: true, force: true });
    const app = new App({ outdir: tmp, context });
    // CDK bundles each function as its construct is made, in buildApp.
    withBundlerShortcut(() => (buildApp(app), app.synth()));
    writeFileSync(join(tmp, 'rehearsal-context.json'), JSON.stringify(context));
    try {
      renameSync(tmp, dir);
      synthesized = true;
    } catch (error) {
      // Another process renamed its copy first: same key, same content.
      if (!existsSync(join(dir, 'manifest.json'))) throw error;
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const stage = String(context.stage ?? 'staging');
  const stackName = `PublicEvents-${stage}`;
  const template = JSON.parse(readFileSync(join(dir, `${stackName}.template.json`), 'utf8')) as Record<string, unknown>;
  return { dir, stackName, template, synthesized };
}
