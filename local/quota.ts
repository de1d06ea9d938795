/**
 * The local server's daily quota, standing in for API Gateway's usage plan
 * (PRODUCT P4): each request the authorizer allowed counts against its key's
 * UTC day, whatever the handler answers; the 1001st of a day is refused.
 * The count is one conditional atomic update in the store, so concurrent
 * requests cannot overshoot; a new day is a new item. Since this server
 * counts, it knows what is left, and says so (X-RateLimit-Remaining), which
 * API Gateway's Lambdas cannot.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DAILY_QUOTA, quotaReset } from '../lambdas/core/rate-limit.js';
import { keys } from '../lambdas/store/table/table.js';

export class LocalDailyQuota {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly limit = DAILY_QUOTA,
  ) {}

  /** Counts one request: refused when the key's day is already used up; `remaining` is what is left after it. */
  async consume(keyId: string, now: Date): Promise<{ allowed: boolean; remaining: number }> {
    const day = now.toISOString().slice(0, 10);
    const { resetEpochSeconds } = quotaReset(now);
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.quota(keyId, day),
          UpdateExpression: 'SET #count = if_not_exists(#count, :zero) + :one, #type = :type, expires_at = :expires',
          ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
          ExpressionAttributeNames: { '#count': 'count', '#type': 'type' },
          // expires_at: a TTL attribute, so old days clean themselves up where TTL is on.
          ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':limit': this.limit, ':type': 'QUOTA', ':expires': resetEpochSeconds + 86_400 },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      const count = Number((Attributes as { count?: number } | undefined)?.count);
      if (!Number.isInteger(count)) throw new Error('the quota update returned no count');
      return { allowed: true, remaining: Math.max(0, this.limit - count) };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException || (error as { name?: string }).name === 'ConditionalCheckFailedException') return { allowed: false, remaining: 0 };
      throw error;
    }
  }
}
