/**
 * Nothing in a template is looked up at deploy time from outside the
 * repository (issue 22): no `AWS::SSM::Parameter::Value` parameter but the
 * one CDK's default synthesizer adds for its bootstrap version check, and no
 * Lambda layer at all (Powertools is bundled, lib/route-function.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { routes } from '../../lambdas/routes.js';
import { resources, synthesized } from './support.js';

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

  it('gives no function a layer', () => {
    const functions = resources(template, 'AWS::Lambda::Function');
    expect(functions).toHaveLength(routes.length + 6); // the routes, the authorizer, the redirect, the ingest, key management, the webhooks fan-out and delivery
    for (const [, f] of functions) expect(f.Properties.Layers).toBeUndefined();
    expect(resources(template, 'AWS::Lambda::LayerVersion')).toEqual([]);
  });
});
