/**
 * What a first `cdk deploy` on a new account needs, and the limits that hold
 * against keyless floods (issue 22), asserted on the synthesized templates:
 * explicit DependsOn, the Public stage throttle, the optional regional web
 * ACL, the ingest's maximum concurrency, alarm actions, the operator's
 * outputs, and CloudFront only where it is meant to be.
 */
import { describe, expect, it } from '@jest/globals';
import { App, Stack } from 'aws-cdk-lib';
import { CfnStage } from 'aws-cdk-lib/aws-apigateway';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { CfnInclude } from 'aws-cdk-lib/cloudformation-include';
import { rules } from 'cdk-nag';
import { NagRuleCompliance } from 'cdk-nag';
import { resources, synthApp, synthesized } from './support.js';

const staging = synthesized();
const production = synthesized({ stage: 'production' });

type Resource = { Type: string; DependsOn?: string[]; Properties: Record<string, unknown> };
const all = (t: Template) => (t.toJSON() as { Resources: Record<string, Resource> }).Resources;
const idOf = (t: Template, type: string, name: string) =>
  Object.entries(all(t)).find(([id, r]) => r.Type === type && id.includes(name))![0];

describe.each([
  ['staging', staging],
  ['production', production],
])('%s', (_stage, { template: t, templateFile }) => {
  it('creates every stage (Public, Embed, key management) after the account-level CloudWatch role setting', () => {
    const account = idOf(t, 'AWS::ApiGateway::Account', 'Account');
    const stages = Object.entries(all(t)).filter(([, r]) => r.Type === 'AWS::ApiGateway::Stage');
    expect(stages).toHaveLength(3);
    for (const [, s] of stages) expect(s.DependsOn).toContain(account);
  });

  it('throttles the whole Public stage, every resource and method, with the context defaults', () => {
    const publicApi = idOf(t, 'AWS::ApiGateway::RestApi', 'PublicApi');
    t.hasResourceProperties('AWS::ApiGateway::Stage', {
      RestApiId: { Ref: publicApi },
      MethodSettings: Match.arrayWith([Match.objectLike({ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 })]),
    });
  });

  it("meets cdk-nag ServerlessChecks' APIGWDefaultThrottling on every stage, unsuppressed", () => {
    // The stages as constructs again, read back from the synthesized template (cloudformation-include makes the
    // same L1 classes the stack made): the rule reads what was synthesized, from the run's shared synthesis.
    const included = new CfnInclude(new Stack(new App(), 'Included'), 'Template', { templateFile });
    const stages = included.node.findAll().filter((c): c is CfnStage => c instanceof CfnStage);
    expect(stages).toHaveLength(3);
    for (const s of stages) expect(rules.apigw.APIGWDefaultThrottling(s)).toBe(NagRuleCompliance.COMPLIANT);
  });

  it('maps gateway-response headers only from sources AWS documents for gateway responses: literals, method.request.*, stageVariables.*', () => {
    const values = resources(t, 'AWS::ApiGateway::GatewayResponse').flatMap(([, r]) => Object.values((r.Properties.ResponseParameters ?? {}) as Record<string, string>));
    expect(values.length).toBeGreaterThan(20);
    for (const v of values) expect(v).toMatch(/^('[^']*'|method\.request\.(header|path|querystring)\.[\w-]+|stageVariables\.\w+)$/);
  });

  it('lets at most 2 ingest functions run at once', () => {
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 2 } });
  });

  it('gives every alarm an ALARM and an OK action on a TLS-only topic the stack creates', () => {
    const topic = idOf(t, 'AWS::SNS::Topic', 'AlarmTopic');
    const alarms = resources(t, 'AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThan(30);
    for (const [, a] of alarms) {
      expect(a.Properties.AlarmActions).toEqual([{ Ref: topic }]);
      expect(a.Properties.OKActions).toEqual([{ Ref: topic }]);
    }
    const policy = JSON.stringify(resources(t, 'AWS::SNS::TopicPolicy'));
    expect(policy).toContain('aws:SecureTransport');
    expect(resources(t, 'AWS::SNS::Subscription')).toEqual([]);
  });

  it('outputs what the runbook and the deploy steps use', () => {
    const outputs = t.findOutputs('*');
    for (const name of ['PublicApiUrl', 'EmbedApiUrl', 'TableName', 'UsagePlanId', 'IngestQueueUrl', 'IngestDeadLetterQueueUrl', 'IngestDeadLetterQueueArn', 'IngestEventSourceMappingUuid', 'AlarmTopicArn', 'CursorKeySecretArn']) {
      expect(Object.keys(outputs)).toContain(name);
    }
    const dlq = idOf(t, 'AWS::SQS::Queue', 'DeadLetters');
    expect(outputs.IngestDeadLetterQueueArn!.Value).toEqual({ 'Fn::GetAtt': [dlq, 'Arn'] });
    expect(outputs.IngestEventSourceMappingUuid!.Value).toEqual({ Ref: idOf(t, 'AWS::Lambda::EventSourceMapping', 'Ingest') });
  });
});

describe('first deploy on an account CloudFront has not verified', () => {
  it('leaves the Embed distribution out of staging by default, and puts it in production', () => {
    expect(resources(staging.template, 'AWS::CloudFront::Distribution')).toEqual([]);
    expect(resources(production.template, 'AWS::CloudFront::Distribution')).toHaveLength(1);
    expect(resources(synthesized({ embedCdn: 'true' }).template, 'AWS::CloudFront::Distribution')).toHaveLength(1);
    expect(resources(synthesized({ stage: 'production', embedCdn: 'false' }).template, 'AWS::CloudFront::Distribution')).toEqual([]);
  });
});

describe('the Public web ACL', () => {
  const waf = (t: Template) => resources(t, 'AWS::WAFv2::WebACL');

  it('is on in production: regional, one rate-based rule per client IP answered with the 429 envelope, associated with the Public stage', () => {
    const t = production.template;
    expect(waf(t)).toHaveLength(1);
    t.hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'REGIONAL',
      DefaultAction: { Allow: {} },
      Rules: [
        Match.objectLike({
          Statement: { RateBasedStatement: { Limit: 1000, AggregateKeyType: 'IP', EvaluationWindowSec: 300 } },
          Action: {
            Block: { CustomResponse: { ResponseCode: 429, CustomResponseBodyKey: 'TooManyRequests', ResponseHeaders: [{ Name: 'X-RateLimit-Limit', Value: '1000' }] } },
          },
        }),
      ],
    });
    const body = (waf(t)[0]![1].Properties.CustomResponseBodies as Record<string, { Content: string }>).TooManyRequests!;
    expect(JSON.parse(body.Content)).toEqual({ success: false, message: 'Too many requests. Please try again later.' });
    const [[id, association]] = Object.entries(all(t)).filter(([, r]) => r.Type === 'AWS::WAFv2::WebACLAssociation') as [[string, Resource]];
    const publicStage = Object.entries(all(t)).find(([sid, r]) => r.Type === 'AWS::ApiGateway::Stage' && sid.includes('PublicApi'))![0];
    expect(JSON.stringify(association.Properties.ResourceArn)).toContain(publicStage);
    expect(association.DependsOn).toContain(publicStage);
    expect(id).toContain('PublicWaf');
  });

  it('is off in staging unless switched on, and takes its limit from context', () => {
    expect(waf(staging.template)).toEqual([]);
    const on = synthesized({ publicWaf: 'true', publicWafRateLimit: '300' }).template;
    on.hasResourceProperties('AWS::WAFv2::WebACL', { Rules: [Match.objectLike({ Statement: { RateBasedStatement: Match.objectLike({ Limit: 300 }) } })] });
    expect(resources(on, 'AWS::WAFv2::WebACLAssociation')).toHaveLength(1);
    expect(waf(synthesized({ stage: 'production', publicWaf: 'false' }).template)).toEqual([]);
  });
});

describe('context switches', () => {
  it('sets the Public stage throttle and the ingest concurrency from context, and refuses bad values by name', () => {
    const custom = synthesized({ publicThrottleRate: '50', publicThrottleBurst: '80', ingestMaxConcurrency: '5' }).template;
    custom.hasResourceProperties('AWS::ApiGateway::Stage', { MethodSettings: Match.arrayWith([Match.objectLike({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 80 })]) });
    custom.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 5 } });
    expect(() => synthApp({ ingestMaxConcurrency: '1' })).toThrow(/ingestMaxConcurrency/);
    expect(() => synthApp({ publicThrottleRate: '0' })).toThrow(/publicThrottleRate/);
  });

  it('subscribes an e-mail address to the created topic, and uses a given topic instead of creating one', () => {
    const mail = synthesized({ alarmEmail: 'ops@example.com' }).template;
    mail.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
    const given = synthesized({ alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops' }).template;
    expect(resources(given, 'AWS::SNS::Topic')).toEqual([]);
    for (const [, a] of resources(given, 'AWS::CloudWatch::Alarm')) expect(a.Properties.AlarmActions).toEqual(['arn:aws:sns:eu-west-1:123456789012:ops']);
    expect(() => synthApp({ alarmEmail: 'ops@example.com', alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops' })).toThrow(/alarmEmail/);
    expect(() => synthApp({ alarmEmail: 'not-an-address' })).toThrow(/alarmEmail/);
  });

  it('routes the custom domain only after the stage each rule names', () => {
    const t = synthesized({ domainName: 'api.example.com', certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc' }).template;
    const stages = Object.fromEntries(Object.entries(all(t)).filter(([, r]) => r.Type === 'AWS::ApiGateway::Stage').map(([id, r]) => [JSON.stringify(r.Properties.RestApiId), id]));
    const rules = Object.values(all(t)).filter((r) => r.Type === 'AWS::ApiGatewayV2::RoutingRule');
    expect(rules).toHaveLength(3);
    for (const rule of rules) {
      const apiId = (rule.Properties.Actions as { InvokeApi: { ApiId: unknown } }[])[0]!.InvokeApi.ApiId;
      expect(rule.DependsOn).toContain(stages[JSON.stringify(apiId)]);
    }
  });
});
