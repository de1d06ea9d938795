/** The API Gateway side of a key, with the AWS SDK mocked (aws-sdk-client-mock). */
import { beforeEach, describe, expect, it } from '@jest/globals';
import { APIGatewayClient, CreateApiKeyCommand, CreateUsagePlanKeyCommand, DeleteApiKeyCommand } from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { ApiGatewayUsagePlan } from '../../lambdas/key-admin/usage-plan.js';

const apiGateway = mockClient(APIGatewayClient);
beforeEach(() => {
  apiGateway.reset();
});
const plan = () => new ApiGatewayUsagePlan(new APIGatewayClient({ region: 'eu-west-1' }), 'plan123');

describe('ApiGatewayUsagePlan', () => {
  it('creates an enabled API key whose value is a fresh usage identifier, and attaches it to the plan', async () => {
    apiGateway.on(CreateApiKeyCommand).resolves({ id: 'apikey1' });
    apiGateway.on(CreateUsagePlanKeyCommand).resolves({});
    const out = await plan().provision('key_abc');
    expect(out).toEqual({ planKeyId: 'apikey1', usageIdentifier: expect.stringMatching(/^ui_[0-9A-Za-z]{32}$/) });
    const create = apiGateway.commandCalls(CreateApiKeyCommand)[0]!.args[0].input;
    expect(create).toMatchObject({ name: 'key_abc', enabled: true, value: out.usageIdentifier, tags: { 'public-events:usage-plan': 'plan123' } });
    expect(apiGateway.commandCalls(CreateUsagePlanKeyCommand)[0]!.args[0].input).toEqual({ usagePlanId: 'plan123', keyId: 'apikey1', keyType: 'API_KEY' });
  });

  it('deletes the new API key when it cannot be attached, leaving no orphan', async () => {
    apiGateway.on(CreateApiKeyCommand).resolves({ id: 'apikey1' });
    apiGateway.on(CreateUsagePlanKeyCommand).rejects(new Error('TooManyRequests'));
    apiGateway.on(DeleteApiKeyCommand).resolves({});
    await expect(plan().provision('key_abc')).rejects.toThrow('TooManyRequests');
    expect(apiGateway.commandCalls(DeleteApiKeyCommand)[0]!.args[0].input).toEqual({ apiKey: 'apikey1' });
  });

  it('removes a plan key by deleting it', async () => {
    apiGateway.on(DeleteApiKeyCommand).resolves({});
    await plan().remove('apikey1');
    expect(apiGateway.commandCalls(DeleteApiKeyCommand)).toHaveLength(1);
  });

  it('counts a plan key already deleted as removed', async () => {
    apiGateway.on(DeleteApiKeyCommand).rejects(Object.assign(new Error('Invalid API Key identifier specified'), { name: 'NotFoundException' }));
    await expect(plan().remove('gone')).resolves.toBeUndefined();
  });

  it('passes on any other failure to delete', async () => {
    apiGateway.on(DeleteApiKeyCommand).rejects(Object.assign(new Error('Bad request'), { name: 'BadRequestException' }));
    await expect(plan().remove('apikey1')).rejects.toThrow('Bad request');
  });

  it('never sends two keys the same usage identifier', async () => {
    apiGateway.on(CreateApiKeyCommand).resolves({ id: 'x' });
    apiGateway.on(CreateUsagePlanKeyCommand).resolves({});
    const a = await plan().provision('key_a');
    const b = await plan().provision('key_b');
    expect(a.usageIdentifier).not.toBe(b.usageIdentifier);
  });
});
