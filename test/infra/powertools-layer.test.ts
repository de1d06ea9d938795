/**
 * Powertools comes from AWS's Powertools layer: every function carries the
 * layer, whose ARN CloudFormation reads at deploy time from AWS's public SSM
 * parameter for the exact version package.json pins (and node_modules holds,
 * so Lambda runs the code the tests ran).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { routes } from '../../lambdas/routes.js';
import { powertoolsLayerParameter, powertoolsVersion } from '../../lib/powertools-layer.js';
import { resources, synthApp } from './support.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { dependencies: Record<string, string> };
const powertoolsPackages = Object.keys(pkg.dependencies).filter((n) => n.startsWith('@aws-lambda-powertools/'));

describe('Powertools layer', () => {
  it('is pinned to the version package.json pins for every Powertools package, which node_modules holds', () => {
    const version = powertoolsVersion();
    expect(powertoolsPackages.length).toBeGreaterThan(0);
    for (const name of powertoolsPackages) {
      expect(pkg.dependencies[name]).toBe(version);
      const installed = JSON.parse(readFileSync(`${ROOT}node_modules/${name}/package.json`, 'utf8')) as { version: string };
      expect(installed.version).toBe(version);
    }
  });

  it('refuses mixed versions, ranges and no Powertools at all, since one layer holds one release', () => {
    expect(powertoolsVersion({ dependencies: { '@aws-lambda-powertools/logger': '2.35.0', '@aws-lambda-powertools/metrics': '2.35.0', zod: '4.0.0' } })).toBe('2.35.0');
    expect(() => powertoolsVersion({ dependencies: { '@aws-lambda-powertools/logger': '2.35.0', '@aws-lambda-powertools/metrics': '2.34.0' } })).toThrow(/one exact version/);
    expect(() => powertoolsVersion({ dependencies: { '@aws-lambda-powertools/logger': '^2.35.0' } })).toThrow(/one exact version/);
    expect(() => powertoolsVersion({ dependencies: {} })).toThrow(/found: none/);
  });

  describe.each(['staging', 'production'])('in the %s template', (stage) => {
    const template = synthApp({ stage }).template.toJSON() as {
      Parameters: Record<string, { Type: string; Default?: string }>;
      Resources: Record<string, { Type: string; Properties: { Layers?: unknown[] } }>;
    };
    const ssm = Object.entries(template.Parameters).filter(([, p]) => p.Default === powertoolsLayerParameter(powertoolsVersion()));

    it("is resolved at deploy time from AWS's public SSM parameter, one template parameter for all functions", () => {
      expect(powertoolsLayerParameter('2.35.0')).toBe('/aws/service/powertools/typescript/generic/all/2.35.0');
      expect(ssm).toHaveLength(1);
      expect(ssm[0]![1].Type).toBe('AWS::SSM::Parameter::Value<String>');
    });

    it('is on every function, ingest, authorizer and old-prefix redirect included, and is its only layer', () => {
      const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
      expect(functions).toHaveLength(routes.length + 3);
      for (const f of functions) expect(f.Properties.Layers).toEqual([{ Ref: ssm[0]![0] }]);
    });
  });

  it('adds no layer resource of its own: the layer is AWS-published, nothing is uploaded', () => {
    expect(resources(synthApp().template, 'AWS::Lambda::LayerVersion')).toEqual([]);
  });
});
