/**
 * Powertools for AWS Lambda comes from AWS's own Lambda layer, not from the
 * bundles: Logger and Metrics add about 38 KiB to every bundle (+26…+39 %),
 * over issue 14's +30 % budget, while the layer is maintained and published
 * by AWS in every region and shared by all functions.
 *
 * The layer's ARN is not written down: AWS publishes it per region as the
 * public SSM parameter /aws/service/powertools/typescript/generic/all/<version>,
 * which CloudFormation resolves at deploy time (a template parameter of type
 * AWS::SSM::Parameter::Value<String>), so synth stays offline. The version is
 * the one package.json pins for the @aws-lambda-powertools packages, the
 * same code the local server and the tests run from node_modules; one
 * version in one place.
 */
import { readFileSync } from 'node:fs';
import { LayerVersion, type ILayerVersion } from 'aws-cdk-lib/aws-lambda';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';

const ROOT = new URL('..', import.meta.url).pathname;

/** Bundles leave these to the layer (esbuild externals, next to the AWS SDK the runtime provides). */
export const POWERTOOLS_EXTERNALS = '@aws-lambda-powertools/*';

/**
 * The exact version every @aws-lambda-powertools dependency of package.json
 * pins. The layer holds one release of all utilities, so mixed versions (or a
 * range) could not be matched by one layer and are refused.
 */
export function powertoolsVersion(packageJson: { dependencies?: Record<string, string> } = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8'))): string {
  const versions = new Set(
    Object.entries(packageJson.dependencies ?? {})
      .filter(([name]) => name.startsWith('@aws-lambda-powertools/'))
      .map(([, version]) => version),
  );
  const [version, ...others] = [...versions];
  if (!version || others.length > 0 || !/^\d+\.\d+\.\d+$/.test(version)) {
    throw new Error(`package.json must pin every @aws-lambda-powertools package to one exact version for the Powertools layer, found: ${[...versions].join(', ') || 'none'}`);
  }
  return version;
}

/** AWS's public SSM parameter holding the layer ARN of a Powertools release (the same name in every region). */
export const powertoolsLayerParameter = (version: string) => `/aws/service/powertools/typescript/generic/all/${version}`;

/**
 * The Powertools layer for a function. The SSM lookup is one template
 * parameter per stack whatever the number of functions (CDK keys it by the
 * parameter name); the layer is architecture-independent for Node.js.
 */
export function powertoolsLayer(scope: Construct, id = 'PowertoolsLayer'): ILayerVersion {
  return LayerVersion.fromLayerVersionArn(scope, id, StringParameter.valueForStringParameter(scope, powertoolsLayerParameter(powertoolsVersion())));
}
