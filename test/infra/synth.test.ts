/** `npx cdk synth` as an operator runs it: the CLI, offline, no AWS credentials, real bundling. */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { routes } from '../../lambdas/routes.js';
import { synthesizeAssembly, withCdkJsonContext } from '../../local/rehearsal/assembly.js';
import { REHEARSAL_STAGES } from '../../local/rehearsal/checks.js';
import { machineContention } from '../../local/rehearsal/contention.js';
import { ROOT } from '../support/process.js';
import { CDK_FEATURE_FLAGS } from './support.js';

describe('the feature flags', () => {
  it('are the ones aws-cdk-lib recommends, at their recommended values, as cdk init writes them into cdk.json', () => {
    // An upgrade of aws-cdk-lib that recommends a new flag fails here: review what it changes in the templates, then add it.
    const recommended = JSON.parse(readFileSync(`${ROOT}node_modules/aws-cdk-lib/recommended-feature-flags.json`, 'utf8')) as Record<string, unknown>;
    expect(CDK_FEATURE_FLAGS).toEqual(recommended);
  });
});

describe.each(['staging', 'production'])('cdk synth -c stage=%s', (stage) => {
  it('synthesizes without credentials or network, cdk-nag clean', async () => {
    // Only what the CLI needs: no AWS_* variables, no profile.
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: '/nonexistent', CDK_DISABLE_CLI_TELEMETRY: 'true' };
    const out = `cdk.out/test-synth-${stage}`;
    const { stderr } = await promisify(execFile)(process.execPath, ['node_modules/aws-cdk/bin/cdk', 'synth', '-q', '-c', `stage=${stage}`, '--output', out], {
      cwd: ROOT,
      env,
      // Bounded so that a hung CLI ends here with its output, stretched by the machine's contention like the test's
      // own timeout (test/support/load-aware-environment.js): a loaded machine is slow, not broken.
      timeout: Math.ceil(120_000 * machineContention()),
    });
    const template = JSON.parse(readFileSync(`${ROOT}${out}/PublicEvents-${stage}.template.json`, 'utf8')) as { Resources: Record<string, { Type: string; Properties?: { Code?: { S3Key?: unknown } } }> };
    const types = Object.values(template.Resources).map((r) => r.Type);
    // One per route, the authorizer, the old-prefix redirect, the ingest function, key management, the webhooks' fan-out
    // and delivery; with the Embed distribution, the widget's deploy-time copier (lib/embed-widget.ts).
    expect(types.filter((t) => t === 'AWS::Lambda::Function')).toHaveLength(routes.length + 6 + (stage === 'production' ? 1 : 0));
    expect(types).toContain('AWS::ApiGateway::UsagePlan');
    // The Embed distribution: production only by default, so a first staging deploy works before CloudFront verifies the account.
    expect(types.includes('AWS::CloudFront::Distribution')).toBe(stage === 'production');
    const report = JSON.parse(readFileSync(`${ROOT}${out}/validation-report.json`, 'utf8')) as { pluginReports: { violations: unknown[] }[] };
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    // cdk.json sets every recommended feature flag, so the CLI has none to warn about.
    expect(stderr).not.toMatch(/feature flags? (is|are) not configured/);
    // The rehearsal bundles through a shortcut to the same esbuild (local/rehearsal/bin/npx, without npm's start):
    // its bundles are the CLI's, byte for byte, and so are their source maps but for the folders they name (each
    // assembly's own: the reason the assets' hashes differ).
    // The widget's copier (production) is aws-cdk-lib's prebuilt Python, not an esbuild bundle: left out.
    const copiers = (resources: typeof template.Resources) =>
      new Set(Object.values(resources).flatMap((r) => (r.Type === 'Custom::CDKBucketDeployment' ? [String((r.Properties as { ServiceToken: { 'Fn::GetAtt': string[] } }).ServiceToken['Fn::GetAtt'][0])] : [])));
    const bundles = (dir: string, resources: typeof template.Resources) =>
      Object.fromEntries(
        Object.entries(resources).flatMap(([id, r]) => {
          if (r.Type !== 'AWS::Lambda::Function' || copiers(resources).has(id)) return [];
          const asset = join(dir, `asset.${String(r.Properties?.Code?.S3Key).replace(/\.zip$/, '')}`);
          const map = JSON.parse(readFileSync(join(asset, 'index.mjs.map'), 'utf8')) as { mappings: string; names: string[] };
          return [[id, { code: readFileSync(join(asset, 'index.mjs'), 'utf8'), mappings: map.mappings, names: map.names }]];
        }),
      );
    const rehearsed = synthesizeAssembly(withCdkJsonContext(REHEARSAL_STAGES[stage]!));
    const cli = bundles(`${ROOT}${out}`, template.Resources);
    expect(Object.keys(cli)).toHaveLength(routes.length + 6);
    expect(bundles(rehearsed.dir, (rehearsed.template as { Resources: typeof template.Resources }).Resources)).toEqual(cli);
    // Bundling twenty-two functions takes longer than jest's default on a busy machine; the CLI call itself is bounded at 120 s (stretched).
  }, 150_000);
});
