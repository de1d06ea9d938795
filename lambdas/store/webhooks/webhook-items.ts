/**
 * Webhooks' items (PRODUCT P18; docs/data-model.md, "Webhooks"), each in a
 * partition of its own kind so that IAM's dynamodb:LeadingKeys gives each
 * role exactly its part:
 *
 * - `USERKEYS#{userId}` / `HOOKS#{keyId}`: a key's webhooks (ids and when
 *   each took its place), the limit of 5 and the key's closing decided by
 *   one conditional write (`rev`). In the key's own partition: only the key
 *   manager reads or writes it.
 * - `WEBHOOK#{webhookId}` / `WEBHOOK`: the webhook (scope, URL, its secrets
 *   sealed by the secret box, never in clear) and its delivery state (the
 *   cursor acknowledged last, the delivery in flight, the last failure).
 *   The key manager and the delivery function only.
 * - `WHSCOPE#{feed scope}` / `W#{webhookId}`: the scope's webhooks and
 *   whether each is to be woken (active) or not (retrying: its own retry
 *   carries it; disabled): what the fan-out reads per change of the scope.
 */
import { PK, SK } from '../table/table.js';
import type { DeliveryFailure, DisabledReason, WebhookScope } from '../../core/webhook-rules.js';

export const WEBHOOK_PARTITION_PREFIX = 'WEBHOOK#';
export const SCOPE_INDEX_PREFIX = 'WHSCOPE#';
export const SCOPE_ENTRY_PREFIX = 'W#';
export const KEY_HOOKS_PREFIX = 'HOOKS#';

export const webhookKeys = {
  webhook: (webhookId: string) => ({ [PK]: `${WEBHOOK_PARTITION_PREFIX}${webhookId}`, [SK]: 'WEBHOOK' }),
  keyHooks: (userId: string, keyId: string) => ({ [PK]: `USERKEYS#${userId}`, [SK]: `${KEY_HOOKS_PREFIX}${keyId}` }),
  scopeEntry: (feed: string, webhookId: string) => ({ [PK]: `${SCOPE_INDEX_PREFIX}${feed}`, [SK]: `${SCOPE_ENTRY_PREFIX}${webhookId}` }),
};

/** A key's webhooks: each id with the time its place was taken. */
export interface KeyHooksItem {
  type: 'KEYHOOKS';
  hooks: Record<string, string>;
  rev: number;
  /** The key was revoked or its user deleted: no webhook is ever added again. */
  closed?: true;
}

/** The delivery being made: its id (the receiver's `webhook-id`), from where and to where, its attempts. */
export interface InFlight {
  id: string;
  /** The cursor it starts after (the webhook's `cursor` when it began). */
  start: string;
  /** The cursor the first attempt's page ended at: a retry never reaches beyond it. */
  end: string;
  first_at: string;
  attempts: number;
  /** When the last attempt was made. */
  last_at?: string;
  /** When the next attempt is due (after a failed one). */
  next_at?: string;
  /** An attempt is being sent: no other starts before this time unless it is answered first (DELIVERY_LEASE_MS). */
  lease_until?: string;
}

export interface WebhookItem {
  type: 'WEBHOOK';
  webhook_id: string;
  user_id: string;
  key_id: string;
  scope: WebhookScope;
  /** The feed scope it reads (lambdas/core/webhook-rules.ts, resolveScope). */
  feed: string;
  url: string;
  /** The current secret, sealed (secret-box.ts). */
  secret: string;
  /** The secret before the last rotation, sealed, signed with too until `previous_until`. */
  previous_secret?: string;
  previous_until?: string;
  secret_rotated_at?: string;
  state: 'active' | 'disabled';
  disabled_reason?: DisabledReason;
  disabled_at?: string;
  /** Written by the key's revoke or its user's deletion before either answers: no delivery starts after it. */
  key_closed?: true;
  /** The tombstone of a webhook that was live when its key closed it (one a create never finished is not): its closing is audited. */
  closed_live?: true;
  /** A delete took effect (the webhook disabled, its URL and secrets dropped); the item goes next, then its place. */
  deleted_at?: string;
  /**
   * The claims of the audit lines of a delete, a closing and a disable (webhook-table.ts, `claim`): whoever claims
   * one writes its line, so each is written once. A resume clears the disable's, for the next disable's line.
   */
  audited_deleted?: string;
  audited_closed?: string;
  audited_disabled?: string;
  /** The P16 cursor after the last acknowledged delivery (or the start). */
  cursor: string;
  /** A fresh start replaces the receiver's copy: deliveries carry `reset: true` until its members are all given. */
  reset?: true;
  inflight?: InFlight;
  /** The first failed attempt since the last 2xx. */
  failing_since?: string;
  last_failure?: DeliveryFailure;
  last_success_at?: string;
  created_at: string;
  /** SHA-256 of the create's parameters when it had an idempotency key: a retry with others is refused. */
  request_hash?: string;
}

export type ScopeEntryState = 'active' | 'retrying' | 'disabled';

export interface ScopeEntryItem {
  type: 'WHSCOPE';
  webhook_id: string;
  state: ScopeEntryState;
}
