import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { buildApp } from '../../lib/app.js';
import { SYNTH_CACHE_VARIABLE } from '../support/synth-cache.setup.mjs';

/**
 * The feature flags cdk.json sets (every flag aws-cdk-lib recommends, as `cdk
 * init` writes them). The CLI passes cdk.json's context to the app; jest does
 * not read cdk.json, so the tests pass the flags themselves and synthesize
 * what `cdk synth` does.
 */
export const CDK_FEATURE_FLAGS: Record<string, unknown> = Object.fromEntries(
  Object.entries((JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> }).context).filter(([key]) =>
    key.startsWith('@aws-cdk'),
  ),
);

/** The context synthApp and synthesized give the app: cdk.json's flags, staging, no bundling, then the test's. */
const appContext = (context: Record<string, unknown>) => ({ ...CDK_FEATURE_FLAGS, stage: 'staging', 'aws:cdk:bundling-stacks': [], ...context });

/**
 * Synthesizes the app as bin/app.ts does, without bundling (one test bundles
 * for real), and gives the live objects: for a test that needs the constructs
 * (`stack.node`) or a synth that must throw. Otherwise use `synthesized`.
 */
export function synthApp(context: Record<string, unknown> = {}) {
  const outdir = mkdtempSync(join(tmpdir(), 'pe-cdk-'));
  const app = new App({ outdir, context: appContext(context) });
  const stack = buildApp(app);
  const assembly = app.synth();
  return { app, stack, assembly, outdir, template: Template.fromStack(stack) };
}

/** Where the run's synthesized assemblies are kept: the run's folder (jest's globalSetup), else this module's own. */
let ownCache: string | undefined;
const cacheRoot = () => process.env[SYNTH_CACHE_VARIABLE] ?? (ownCache ??= mkdtempSync(join(tmpdir(), 'pe-synth-file-')));

/** The main stack's artifact id, written beside the assembly (the app also holds the Embed web ACL stack when asked). */
const MAIN = 'main-stack.json';

/**
 * The same synthesis as synthApp, done at most once per jest run for each
 * context and shared by every test file: the assembly directory (templates,
 * manifest, cdk-nag's validation report) is kept in the run's folder under a
 * hash of the whole context, and a file asking again reads it from there.
 * It cannot go stale: the folder is made by the run's globalSetup
 * (test/support/synth-cache.setup.mjs) and removed by its teardown, so no
 * template outlives the sources it came from. Two files asking at once may
 * both synthesize; the first to finish is kept (an atomic rename).
 */
export function synthesized(context: Record<string, unknown> = {}): { template: Template; templateFile: string; assembly: CloudAssembly; outdir: string } {
  const full = appContext(context);
  const key = createHash('sha256').update(JSON.stringify(Object.entries(full).sort(([a], [b]) => a.localeCompare(b)))).digest('hex').slice(0, 24);
  const outdir = join(cacheRoot(), key);
  if (!existsSync(outdir)) {
    const fresh = mkdtempSync(`${outdir}.synth-`);
    const app = new App({ outdir: fresh, context: full });
    const stack = buildApp(app);
    app.synth();
    writeFileSync(join(fresh, MAIN), JSON.stringify(stack.artifactId));
    try {
      renameSync(fresh, outdir);
    } catch (error) {
      // Another file's synthesis of the same context landed first: the same templates, keep that one.
      if (!existsSync(outdir)) throw error;
      rmSync(fresh, { recursive: true, force: true });
    }
  }
  const assembly = new CloudAssembly(outdir);
  const main = JSON.parse(readFileSync(join(outdir, MAIN), 'utf8')) as string;
  const stack = assembly.getStackArtifact(main);
  return { template: Template.fromJSON(stack.template as Record<string, unknown>), templateFile: stack.templateFullPath, assembly, outdir };
}

/** Resources of a type as [logicalId, resource] pairs. */
// `any`: CloudFormation properties are free-form JSON, read by path in the tests.
type CfnResource = { Properties: Record<string, any> };

export function resources(template: Template, type: string): [string, CfnResource][] {
  return Object.entries(template.findResources(type)) as [string, CfnResource][];
}

export const validationReport = (outdir: string) => join(outdir, 'validation-report.json');

/**
 * The functions that run only at deploy time, behind a custom resource: the
 * widget's copier (aws-cdk-lib's BucketDeployment, lib/embed-widget.ts),
 * where the stage has the Embed distribution. They serve no request.
 */
export function deployTimeFunctions(template: Template): string[] {
  return resources(template, 'Custom::CDKBucketDeployment').map(([, r]) => String(r.Properties.ServiceToken['Fn::GetAtt'][0]));
}

/** The service's functions: every function but the deploy-time ones. */
export function serviceFunctions(template: Template): [string, CfnResource][] {
  const deployTime = new Set(deployTimeFunctions(template));
  return resources(template, 'AWS::Lambda::Function').filter(([id]) => !deployTime.has(id));
}
