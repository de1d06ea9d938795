/** The API Gateway side of a key, with the AWS SDK mocked (aws-sdk-client-mock). */
import { beforeEach, describe, expect, it } from '@jest/globals';
import { APIGatewayClient, CreateApiKeyCommand, CreateUsagePlanKeyCommand, DeleteApiKeyCommand, GetApiKeysCommand } from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { ApiGatewayPlanKeys } from '../../lambdas/key-admin/usage-plan.js';

const apiGateway = mockClient(APIGatewayClient);
beforeEach(() => {
  apiGateway.reset();
});
const plan = () => new ApiGatewayPlanKeys(new APIGatewayClient({ region: 'eu-west-1' }), 'plan123');
const named = (name: string, message = name) => Object.assign(new Error(message), { name });

describe('ApiGatewayPlanKeys', () => {
  it('creates an enabled API key named for its owner and key, with the usage identifier as its value, tagged with the plan, not yet in the plan', async () => {
    apiGateway.on(CreateApiKeyCommand).resolves({ id: 'apikey1' });
    expect(await plan().create('key_abc', 'ui_0123', 'usr_frank')).toBe('apikey1');
    expect(apiGateway.commandCalls(CreateApiKeyCommand)[0]!.args[0].input).toMatchObject({ name: 'usr_frank/key_abc', enabled: true, value: 'ui_0123', tags: { 'public-events:usage-plan': 'plan123' } });
    expect(apiGateway.commandCalls(CreateUsagePlanKeyCommand)).toHaveLength(0);
  });

  it('refuses an answer without an id', async () => {
    apiGateway.on(CreateApiKeyCommand).resolves({});
    await expect(plan().create('key_abc', 'ui_0123', 'usr_frank')).rejects.toThrow('no id');
  });

  it('attaches to its own plan; a key already in the plan counts as attached', async () => {
    apiGateway.on(CreateUsagePlanKeyCommand).resolvesOnce({}).rejectsOnce(named('ConflictException', 'Usage Plan Key already exists'));
    await plan().attach('apikey1');
    await plan().attach('apikey1');
    expect(apiGateway.commandCalls(CreateUsagePlanKeyCommand)[0]!.args[0].input).toEqual({ usagePlanId: 'plan123', keyId: 'apikey1', keyType: 'API_KEY' });
  });

  it('passes on any other failure to attach', async () => {
    apiGateway.on(CreateUsagePlanKeyCommand).rejects(named('NotFoundException', 'Invalid API Key identifier specified'));
    await expect(plan().attach('gone')).rejects.toThrow('Invalid API Key');
  });

  it('removes a plan key by deleting it', async () => {
    apiGateway.on(DeleteApiKeyCommand).resolves({});
    await plan().remove('apikey1');
    expect(apiGateway.commandCalls(DeleteApiKeyCommand)[0]!.args[0].input).toEqual({ apiKey: 'apikey1' });
  });

  it('counts a plan key already deleted as removed', async () => {
    apiGateway.on(DeleteApiKeyCommand).rejects(named('NotFoundException', 'Invalid API Key identifier specified'));
    await expect(plan().remove('gone')).resolves.toBeUndefined();
  });

  it('passes on any other failure to delete', async () => {
    apiGateway.on(DeleteApiKeyCommand).rejects(named('BadRequestException', 'Bad request'));
    await expect(plan().remove('apikey1')).rejects.toThrow('Bad request');
  });

  it("lists the plan's API keys a page at a time from a position, never their values, and only those tagged with this plan", async () => {
    const at = new Date('2026-11-21T12:00:00.000Z');
    apiGateway
      .on(GetApiKeysCommand)
      .resolvesOnce({ items: [{ id: 'a1', name: 'usr_frank/key_a', createdDate: at, tags: { 'public-events:usage-plan': 'plan123' } }, { id: 'x1', name: 'other', tags: {} }], position: 'p2' })
      .resolvesOnce({ items: [{ id: 'a2', name: 'usr_eve/key_b', createdDate: at, tags: { 'public-events:usage-plan': 'plan123' } }, { id: 'y1', name: 'usr_eve/key_c', tags: { 'public-events:usage-plan': 'other-plan' } }] });
    expect(await plan().listPage()).toEqual({ entries: [{ id: 'a1', name: 'usr_frank/key_a', createdAt: at }], position: 'p2' });
    expect(await plan().listPage('p2')).toEqual({ entries: [{ id: 'a2', name: 'usr_eve/key_b', createdAt: at }] });
    const inputs = apiGateway.commandCalls(GetApiKeysCommand).map((c) => c.args[0].input);
    expect(inputs).toEqual([{ limit: 500, includeValues: false }, { limit: 500, includeValues: false, position: 'p2' }]);
  });
});
