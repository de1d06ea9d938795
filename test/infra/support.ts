import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildApp } from '../../lib/app.js';

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

/** Synthesizes the app as bin/app.ts does, without bundling (one test bundles for real). */
export function synthApp(context: Record<string, unknown> = {}) {
  const outdir = mkdtempSync(join(tmpdir(), 'pe-cdk-'));
  const app = new App({ outdir, context: { ...CDK_FEATURE_FLAGS, stage: 'staging', 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = buildApp(app);
  const assembly = app.synth();
  return { app, stack, assembly, outdir, template: Template.fromStack(stack) };
}

/** Resources of a type as [logicalId, resource] pairs. */
// `any`: CloudFormation properties are free-form JSON, read by path in the tests.
type CfnResource = { Properties: Record<string, any> };

export function resources(template: Template, type: string): [string, CfnResource][] {
  return Object.entries(template.findResources(type)) as [string, CfnResource][];
}

export const validationReport = (outdir: string) => join(outdir, 'validation-report.json');
