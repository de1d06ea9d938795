/**
 * The key-management role may not tag someone else's API key with the plan
 * tag and then delete it (issue 37, defect 3, adopted from the security
 * review's reproducer). Evaluated with the project's IAM evaluator
 * (local/rehearsal/iam.ts, @cloud-copilot/iam-simulate) on the role's
 * statements in the synthesized template: the tag condition still bounds
 * deletion, and tagging is allowed only on the key a CreateApiKey is making
 * (lib/key-admin.ts). Every action on foreign keys, stages and plans:
 * test/infra/key-admin.test.ts.
 */
import { expect, it } from '@jest/globals';
import { evaluate, type PolicyDocument } from '../../local/rehearsal/iam.js';
import { tagOnCreateResource } from '../../local/rehearsal/api-keys.js';
import { USAGE_PLAN_TAG } from '../../lambdas/key-admin/usage-plan.js';
import { resources, synthesized } from '../infra/support.js';

const { template: t } = synthesized();
const logicalId = (type: string, prefix: string) => resources(t, type).find(([id]) => id.startsWith(prefix))![0];
const usagePlanId = logicalId('AWS::ApiGateway::UsagePlan', 'ApisPublicApiDailyQuota');
const role = logicalId('AWS::IAM::Role', 'KeyAdminFunctionRole');

function resolve(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(resolve);
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (v.Ref === 'AWS::Partition') return 'aws';
    if (v.Ref === 'AWS::Region') return 'eu-west-1';
    if (v.Ref === 'AWS::AccountId') return '123456789012';
    if (typeof v.Ref === 'string') return `REF(${v.Ref})`;
    if (Array.isArray(v['Fn::GetAtt'])) return `arn:aws:dynamodb:eu-west-1:123456789012:table/${(v['Fn::GetAtt'] as string[])[0]}`;
    if (Array.isArray(v['Fn::Join'])) {
      const [sep, parts] = v['Fn::Join'] as [string, unknown[]];
      return parts.map(resolve).join(sep);
    }
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
  }
  return value;
}
const statements = resources(t, 'AWS::IAM::Policy')
  .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role))
  .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as unknown[]);
const policy: PolicyDocument = { Version: '2012-10-17', Statement: resolve(statements) };
const planId = `REF(${usagePlanId})`;

const allowed = async (action: string, resource: string, context: Record<string, string | string[]>) =>
  (await evaluate({ fn: 'KeyAdminFunction', action, resource, context }, role, [policy])).decision;

// An API key of some other product in the same account and region, never tagged by this stack.
const foreignKeyArn = 'arn:aws:apigateway:eu-west-1::/apikeys/otherproductkey1';
const planTag = { [`aws:RequestTag/${USAGE_PLAN_TAG}`]: planId, 'aws:TagKeys': [USAGE_PLAN_TAG] };

it('refuses to delete a foreign API key as it is (the tag condition works on its own)', async () => {
  expect(await allowed('apigateway:DELETE', foreignKeyArn, {})).toBe('ImplicitlyDenied');
});

it('refuses to put the plan tag on a foreign key, stage or usage plan, so the tag-conditioned delete stays bounded', async () => {
  const steps = {
    // Step 1: TagResource on the foreign key (the tag resource's ARN holds the target's ARN; both spellings).
    tagForeignKey: await allowed('apigateway:PUT', `arn:aws:apigateway:eu-west-1::/tags/${foreignKeyArn}`, planTag),
    tagForeignKeyEncoded: await allowed('apigateway:PUT', `arn:aws:apigateway:eu-west-1::/tags/${encodeURIComponent(foreignKeyArn)}`, planTag),
    tagOtherStage: await allowed('apigateway:PUT', 'arn:aws:apigateway:eu-west-1::/tags/arn:aws:apigateway:eu-west-1::/restapis/abc123/stages/prod', planTag),
    tagOtherUsagePlan: await allowed('apigateway:PUT', 'arn:aws:apigateway:eu-west-1::/tags/arn:aws:apigateway:eu-west-1::/usageplans/other', planTag),
    // Were a foreign key to carry the tag anyway, the delete would be allowed: the tag is the whole bound, hence step 1 must fail.
    deleteNowTagged: await allowed('apigateway:DELETE', foreignKeyArn, { [`aws:ResourceTag/${USAGE_PLAN_TAG}`]: planId }),
  };
  expect(steps).toEqual({
    tagForeignKey: 'ImplicitlyDenied',
    tagForeignKeyEncoded: 'ImplicitlyDenied',
    tagOtherStage: 'ImplicitlyDenied',
    tagOtherUsagePlan: 'ImplicitlyDenied',
    deleteNowTagged: 'Allowed',
  });
});

it('still tags the key a CreateApiKey is making, with the plan tag only', async () => {
  expect(await allowed('apigateway:PUT', tagOnCreateResource('eu-west-1'), planTag)).toBe('Allowed');
  expect(await allowed('apigateway:PUT', tagOnCreateResource('eu-west-1'), { [`aws:RequestTag/${USAGE_PLAN_TAG}`]: 'another-plan', 'aws:TagKeys': [USAGE_PLAN_TAG] })).toBe('ImplicitlyDenied');
});
