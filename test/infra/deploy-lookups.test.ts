/**
 * Nothing in a template is looked up at deploy time from outside the
 * repository (issue 22): no `AWS::SSM::Parameter::Value` parameter but the
 * one CDK's default synthesizer adds for its bootstrap version check, and no
 * Lambda layer on any of the service's functions (Powertools is bundled,
 * lib/route-function.ts). The one layer a template may hold is the AWS CLI
 * of the widget's deploy-time copier (lib/embed-widget.ts), an asset
 * aws-cdk-lib stages into cdk.out from node_modules, never another account's.
 */
import { describe, expect, it } from '@jest/globals';
import { routes } from '../../lambdas/routes.js';
import { deployTimeFunctions, resources, serviceFunctions, synthesized } from './support.js';

describe.each([
  ['staging', {}],
  ['production', { stage: 'production' }],
  ['staging with every optional switch', { embedCdn: 'false', publicWaf: 'true', quotaHeaders: 'context' }],
])('the %s template', (_name, context) => {
  const { template } = synthesized(context);
  const json = template.toJSON() as { Parameters?: Record<string, { Type: string; Default?: string }> };

  it("has no SSM parameter but CDK's BootstrapVersion", () => {
    const ssm = Object.entries(json.Parameters ?? {}).filter(([, p]) => p.Type.startsWith('AWS::SSM::Parameter::'));
    expect(ssm.map(([id, p]) => [id, p.Default])).toEqual([['BootstrapVersion', '/cdk-bootstrap/hnb659fds/version']]);
  });

  it("gives none of the service's functions a layer; the widget's copier's is an asset of the assembly", () => {
    const functions = serviceFunctions(template);
    expect(functions).toHaveLength(routes.length + 6); // the routes, the authorizer, the redirect, the ingest, key management, the webhooks fan-out and delivery
    for (const [, f] of functions) expect(f.Properties.Layers).toBeUndefined();
    const layers = resources(template, 'AWS::Lambda::LayerVersion');
    expect(layers).toHaveLength(deployTimeFunctions(template).length);
    for (const [, l] of layers) expect(l.Properties.Content.S3Bucket).toEqual({ 'Fn::Sub': 'cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}' });
  });
});
