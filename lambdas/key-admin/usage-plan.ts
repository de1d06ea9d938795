/**
 * The AWS half of a key (PRODUCT P4): an API Gateway API key whose value is
 * the key's usage identifier (random, chosen by the key manager, never the
 * customer's key), in the stage's usage plan. The authorizer returns that
 * identifier as `usageIdentifierKey`, so API Gateway meters the 1000/day
 * quota per key.
 *
 * Each API key is tagged at creation with the usage plan's id: the
 * key-management function's role may delete only API keys carrying it, and
 * may tag nothing but a key it is creating (lib/key-admin.ts), since an API
 * key's id is unknown until it exists. Creating, recording and attaching are
 * separate calls so the key manager records the API key's id before it joins
 * the plan (lambdas/store/keys/key-store.ts).
 */
import { APIGatewayClient, CreateApiKeyCommand, CreateUsagePlanKeyCommand, DeleteApiKeyCommand, GetApiKeysCommand } from '@aws-sdk/client-api-gateway';
import { planKeyName, type PlanKeyEntry, type PlanKeyPage, type PlanKeys } from '../store/keys/key-store.js';

/** Tag on every API key made for a usage plan; its value is the plan's id. */
export const USAGE_PLAN_TAG = 'public-events:usage-plan';

export class ApiGatewayPlanKeys implements PlanKeys {
  /** `usagePlanId`: absent where keys are only ever deleted (a user's deletion: the ingest, a resync). */
  constructor(
    private readonly client: Pick<APIGatewayClient, 'send'>,
    private readonly usagePlanId?: string,
  ) {}

  private plan(): string {
    if (!this.usagePlanId) throw new Error('this API Gateway client deletes plan keys only: it was given no usage plan id');
    return this.usagePlanId;
  }

  async create(keyId: string, usageIdentifier: string, userId: string): Promise<string> {
    const usagePlanId = this.plan();
    const created = await this.client.send(
      new CreateApiKeyCommand({
        // The owner and the key: what the sweep needs to find the record that should name it (plan-key-sweep.ts).
        name: planKeyName(userId, keyId),
        description: `Usage identifier of Public Events key ${keyId} (not the customer's key)`,
        enabled: true,
        value: usageIdentifier,
        tags: { [USAGE_PLAN_TAG]: usagePlanId },
      }),
    );
    if (!created.id) throw new Error('API Gateway returned no id for the new API key');
    return created.id;
  }

  async attach(planKeyId: string): Promise<void> {
    try {
      await this.client.send(new CreateUsagePlanKeyCommand({ usagePlanId: this.plan(), keyId: planKeyId, keyType: 'API_KEY' }));
    } catch (error) {
      // In the plan already (a retry after a lost answer): the goal is met.
      if ((error as Error).name !== 'ConflictException') throw error;
    }
  }

  async remove(planKeyId: string): Promise<void> {
    try {
      await this.client.send(new DeleteApiKeyCommand({ apiKey: planKeyId }));
    } catch (error) {
      // Already gone (an earlier retire deleted it but could not record that): the goal is met.
      if ((error as Error).name !== 'NotFoundException') throw error;
    }
  }

  /** One page of the API keys (GetApiKeys answers at most 500), those tagged with this plan's id; the next page's position. */
  async listPage(position?: string): Promise<PlanKeyPage> {
    const usagePlanId = this.plan();
    const page = await this.client.send(new GetApiKeysCommand({ limit: 500, includeValues: false, ...(position ? { position } : {}) }));
    const entries: PlanKeyEntry[] = [];
    for (const k of page.items ?? []) {
      if (k.id && k.tags?.[USAGE_PLAN_TAG] === usagePlanId) entries.push({ id: k.id, name: k.name ?? '', createdAt: k.createdDate ?? new Date(0) });
    }
    return { entries, ...(page.position ? { position: page.position } : {}) };
  }
}
