/**
 * The AWS half of a key (PRODUCT P4): an API Gateway API key whose value is a
 * random, non-secret usage identifier (never the customer's key), attached to
 * the stage's usage plan. The authorizer returns that identifier as
 * `usageIdentifierKey`, so API Gateway meters the 1000/day quota per key.
 * Each API key is tagged with the usage plan's id: the key-management
 * function's role may delete only API keys carrying its plan's tag
 * (lib/key-admin.ts), since an API key's id is unknown until it exists.
 */
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
} from '@aws-sdk/client-api-gateway';
import { randomBase62 } from './random.js';

/** Tag on every API key made for a usage plan; its value is the plan's id. */
export const USAGE_PLAN_TAG = 'public-events:usage-plan';

export interface UsagePlanPort {
  /** Creates the plan key for a key; returns its id and value (the usage identifier). */
  provision(keyId: string): Promise<{ planKeyId: string; usageIdentifier: string }>;
  /** Deletes the plan key (which also detaches it from the plan). */
  remove(planKeyId: string): Promise<void>;
}

export class ApiGatewayUsagePlan implements UsagePlanPort {
  constructor(
    private readonly client: APIGatewayClient,
    private readonly usagePlanId: string,
  ) {}

  async provision(keyId: string): Promise<{ planKeyId: string; usageIdentifier: string }> {
    const usageIdentifier = `ui_${randomBase62(32)}`;
    const created = await this.client.send(
      new CreateApiKeyCommand({
        name: keyId,
        description: `Usage identifier of Public Events key ${keyId} (not the customer's key)`,
        enabled: true,
        value: usageIdentifier,
        tags: { [USAGE_PLAN_TAG]: this.usagePlanId },
      }),
    );
    const planKeyId = created.id;
    if (!planKeyId) throw new Error('API Gateway returned no id for the new API key');
    try {
      await this.client.send(new CreateUsagePlanKeyCommand({ usagePlanId: this.usagePlanId, keyId: planKeyId, keyType: 'API_KEY' }));
    } catch (error) {
      // Do not leave a plan key outside the plan behind.
      await this.client.send(new DeleteApiKeyCommand({ apiKey: planKeyId })).catch(() => undefined);
      throw error;
    }
    return { planKeyId, usageIdentifier };
  }

  async remove(planKeyId: string): Promise<void> {
    try {
      await this.client.send(new DeleteApiKeyCommand({ apiKey: planKeyId }));
    } catch (error) {
      // Already gone (an earlier revoke deleted it but could not record that): the goal is met.
      if ((error as Error).name !== 'NotFoundException') throw error;
    }
  }
}
