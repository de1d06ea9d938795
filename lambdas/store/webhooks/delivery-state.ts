/**
 * The delivery function's side of webhooks (PRODUCT P18): its writes on a
 * webhook's item, each conditional on the state it read, so that
 * - a delivery is recorded (`inflight`: its id, the cursor it starts after,
 *   the cursor its page ended at) before its first send, and a crash after
 *   sending sends the same delivery again (same `webhook-id`, no further);
 * - every send is preceded by a write that holds only while the webhook is
 *   active, its key open, this delivery the one in flight and no other
 *   attempt of it still being sent (its lease): after a revoke or a user's
 *   deletion has closed the key (webhook-records.ts, closeWebhook), or the
 *   webhook was deleted, no send starts, and two runs of one webhook at
 *   once never send at once;
 * - once a send's connection is made, one consistent read looks again
 *   (maySend), so a close that answered while the address was resolved and
 *   the connection made stops the send before anything is written;
 * - the cursor moves only on a 2xx, from the delivery it acknowledges;
 * and the scope entries the fan-out reads (which webhooks to wake).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetAll, itemKeyString } from '../table/batch-get.js';
import type { DeliveryFailure, DisabledReason } from '../../core/webhook-rules.js';
import { PK, SK } from '../table/table.js';
import { SCOPE_ENTRY_PREFIX, SCOPE_INDEX_PREFIX, webhookKeys, type InFlight, type ScopeEntryItem, type ScopeEntryState, type WebhookItem } from './webhook-items.js';
import { WebhookTable } from './webhook-table.js';

const OPEN = '#state = :active AND attribute_not_exists(key_closed)';
const NAMES = { '#state': 'state', '#cursor': 'cursor', '#reset': 'reset' };

export interface ScopePage {
  entries: { webhookId: string; state: ScopeEntryState }[];
  /** Where the next page starts; absent after the last. */
  last?: string;
}

export class DeliveryState extends WebhookTable {
  webhook(webhookId: string): Promise<WebhookItem | undefined> {
    return this.get<WebhookItem>(webhookKeys.webhook(webhookId));
  }

  /**
   * The last look before a send is written, once its connection is made (lambdas/delivery/deliver.ts): whether the
   * webhook is still active, its key open and this delivery the one in flight. Consistent, so a revoke, a user's
   * deletion or a delete that has answered is seen.
   */
  async maySend(webhookId: string, deliveryId: string): Promise<boolean> {
    const now = await this.get<Pick<WebhookItem, 'state' | 'key_closed' | 'inflight'>>(webhookKeys.webhook(webhookId));
    return now?.state === 'active' && !now.key_closed && now.inflight?.id === deliveryId;
  }

  /** Several webhooks at once (consistent), by id: one BatchGetItem for a batch of wake-ups; a webhook gone is absent. */
  async webhooks(webhookIds: readonly string[]): Promise<Map<string, WebhookItem>> {
    const found = await batchGetAll(this.client, this.tableName, webhookIds.map((id) => webhookKeys.webhook(id)), { consistent: true });
    const out = new Map<string, WebhookItem>();
    for (const id of webhookIds) {
      const item = found.get(itemKeyString(webhookKeys.webhook(id))) as WebhookItem | undefined;
      if (item) out.set(id, item);
    }
    return out;
  }

  /**
   * Records a delivery before its first send: only from the cursor read, with none in flight, the webhook active and
   * its key open. The write is also the first attempt's (`inflight.attempts` 1): what every send waits for.
   */
  begin(webhookId: string, cursor: string, inflight: InFlight): Promise<WebhookItem | undefined> {
    return this.update<WebhookItem>(webhookKeys.webhook(webhookId), 'SET inflight = :f', `#cursor = :c AND attribute_not_exists(inflight) AND ${OPEN}`, { ':f': inflight, ':c': cursor, ':active': 'active' }, NAMES);
  }

  /**
   * What every send waits for: this delivery still in flight, the webhook active, its key open, and no other attempt
   * being sent (none, or one whose lease has passed: its run died). Counts the attempt and takes the lease until `until`.
   */
  attempt(webhookId: string, inflightId: string, at: Date, until: Date): Promise<WebhookItem | undefined> {
    return this.update<WebhookItem>(
      webhookKeys.webhook(webhookId),
      'SET inflight.attempts = inflight.attempts + :one, inflight.last_at = :at, inflight.lease_until = :until',
      `inflight.id = :id AND ${OPEN} AND (attribute_not_exists(inflight.lease_until) OR inflight.lease_until <= :at)`,
      { ':one': 1, ':at': at.toISOString(), ':until': until.toISOString(), ':id': inflightId, ':active': 'active' },
      NAMES,
    );
  }

  /** A 2xx: the cursor moves to the delivery's end, nothing in flight, no failure streak; `endsReset` when it gave a fresh start's last members. */
  ack(webhookId: string, inflightId: string, next: string, at: Date, endsReset: boolean): Promise<WebhookItem | undefined> {
    return this.update<WebhookItem>(
      webhookKeys.webhook(webhookId),
      `SET #cursor = :next, last_success_at = :at REMOVE inflight, failing_since${endsReset ? ', #reset' : ''}`,
      'inflight.id = :id',
      { ':next': next, ':at': at.toISOString(), ':id': inflightId },
      NAMES,
    );
  }

  /**
   * A 2xx and the next delivery at once: the cursor moves to the acknowledged delivery's end and `next` is in flight
   * from there, its first attempt counted; only while the acknowledged one is in flight, the webhook active and its
   * key open (else nothing is written: the caller acknowledges alone).
   */
  ackAndBegin(webhookId: string, inflightId: string, cursor: string, at: Date, endsReset: boolean, next: InFlight): Promise<WebhookItem | undefined> {
    return this.update<WebhookItem>(
      webhookKeys.webhook(webhookId),
      `SET #cursor = :next, last_success_at = :at, inflight = :f REMOVE failing_since${endsReset ? ', #reset' : ''}`,
      `inflight.id = :id AND ${OPEN}`,
      { ':next': cursor, ':at': at.toISOString(), ':f': next, ':id': inflightId, ':active': 'active' },
      NAMES,
    );
  }

  /** A page with nothing to send (members not shown, a start's position): the cursor moves on without a delivery. */
  advance(webhookId: string, cursor: string, next: string, endsReset: boolean): Promise<WebhookItem | undefined> {
    return this.update<WebhookItem>(webhookKeys.webhook(webhookId), `SET #cursor = :next${endsReset ? ' REMOVE #reset' : ''}`, `#cursor = :c AND attribute_not_exists(inflight) AND ${OPEN}`, { ':next': next, ':c': cursor, ':active': 'active' }, NAMES);
  }

  /** A failed attempt: when the next is due, what failed, since when the webhook has had no 2xx. */
  failed(webhookId: string, inflightId: string, failure: DeliveryFailure, nextAt: Date): Promise<WebhookItem | undefined> {
    return this.update<WebhookItem>(
      webhookKeys.webhook(webhookId),
      'SET last_failure = :f, inflight.next_at = :n, failing_since = if_not_exists(failing_since, :first) REMOVE inflight.lease_until',
      'inflight.id = :id',
      { ':f': failure, ':n': nextAt.toISOString(), ':first': failure.at, ':id': inflightId },
      NAMES,
    );
  }

  /** Disables an active webhook (410, or 3 days failing); the item written, or undefined when it was not active (already disabled, closed, gone). */
  disable(webhookId: string, reason: DisabledReason, at: Date, failure?: DeliveryFailure): Promise<WebhookItem | undefined> {
    return this.update<WebhookItem>(
      webhookKeys.webhook(webhookId),
      `SET #state = :disabled, disabled_reason = :reason, disabled_at = :at${failure ? ', last_failure = :f' : ''}`,
      OPEN,
      { ':disabled': 'disabled', ':reason': reason, ':at': at.toISOString(), ':active': 'active', ...(failure ? { ':f': failure } : {}) },
      NAMES,
    );
  }

  /**
   * The disable's audit line, claimed (webhook-table.ts): true for the one call that writes it, whether the disable
   * was its own write or one whose run failed after it (the next run that meets the webhook disabled writes it).
   */
  claimDisabled(webhookId: string, claim: string): Promise<boolean> {
    return this.claim(
      webhookKeys.webhook(webhookId),
      'audited_disabled',
      claim,
      '#state = :disabled AND disabled_reason IN (:gone, :failing) AND attribute_not_exists(key_closed) AND attribute_not_exists(deleted_at)',
      { ':disabled': 'disabled', ':gone': 'gone', ':failing': 'failing' },
      { '#state': 'state' },
    );
  }

  /** The feed no longer holds the cursor's position (or its key is gone): a fresh start, `reset` until its members are given. */
  restart(webhookId: string, cursor: string, fresh: string): Promise<WebhookItem | undefined> {
    return this.update<WebhookItem>(webhookKeys.webhook(webhookId), 'SET #cursor = :fresh, #reset = :t REMOVE inflight', `#cursor = :c AND ${OPEN}`, { ':fresh': fresh, ':t': true, ':c': cursor, ':active': 'active' }, NAMES);
  }

  /** Whether the fan-out wakes the webhook; an entry deleted meanwhile (the webhook deleted or closed) is not written again. */
  async setScopeState(feed: string, webhookId: string, state: ScopeEntryState): Promise<void> {
    await this.update(webhookKeys.scopeEntry(feed, webhookId), 'SET #state = :s', 'attribute_exists(#pk)', { ':s': state }, { '#state': 'state' });
  }

  /** Up to `limit` of the scope's webhooks after `after` (consistent: a webhook created a moment ago is woken by the next change). */
  async scopePage(feed: string, after: string | undefined, limit: number): Promise<ScopePage> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :w)',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: { ':pk': `${SCOPE_INDEX_PREFIX}${feed}`, ':w': SCOPE_ENTRY_PREFIX },
        Limit: limit,
        ConsistentRead: true,
        ...(after ? { ExclusiveStartKey: webhookKeys.scopeEntry(feed, after) } : {}),
      }),
    );
    const entries = ((out.Items ?? []) as ScopeEntryItem[]).map((i) => ({ webhookId: i.webhook_id, state: i.state }));
    return { entries, ...(out.LastEvaluatedKey ? { last: entries.at(-1)?.webhookId ?? String(out.LastEvaluatedKey[SK]).slice(SCOPE_ENTRY_PREFIX.length) } : {}) };
  }
}
