/**
 * The key manager's side of webhooks (PRODUCT P18): a key's places (at most
 * 5), the webhook's item, its scope entry, a rotation, a resume, a delete,
 * and a key's closing (its revoke or its user's deletion: every webhook of
 * the key closed before either answers). Each step is one conditional write
 * and safe to repeat; a create or delete cut off half-way is finished by the
 * next call that meets what it left (docs/data-model.md, "Webhooks").
 */
import { webhookKeys, type KeyHooksItem, type ScopeEntryState, type WebhookItem } from './webhook-items.js';
import { WebhookTable } from './webhook-table.js';

/** A place whose webhook item is still missing after this long belonged to a create that died: it is given back. */
export const STALE_PLACE_MS = 60_000;
const CONTENDED_TRIES = 8;

export class WebhookPlacesContended extends Error {
  constructor() {
    super('a key\'s webhook places changed under every try');
    this.name = 'WebhookPlacesContended';
    // A throttle in all but name: the caller answers 503 and the request is retried.
    Object.assign(this, { $retryable: { throttling: true } });
  }
}

export type Reserved = 'reserved' | 'held' | 'full' | 'closed';

export class WebhookRecords extends WebhookTable {
  keyHooks(userId: string, keyId: string): Promise<KeyHooksItem | undefined> {
    return this.get<KeyHooksItem>(webhookKeys.keyHooks(userId, keyId));
  }

  webhook(webhookId: string): Promise<WebhookItem | undefined> {
    return this.get<WebhookItem>(webhookKeys.webhook(webhookId));
  }

  /** Writes the key's places whole, conditional on the revision read; `change` answers the new places or a refusal. */
  private async changePlaces(userId: string, keyId: string, change: (item: KeyHooksItem | undefined) => Promise<KeyHooksItem | Reserved>): Promise<Reserved> {
    for (let i = 0; i < CONTENDED_TRIES; i++) {
      const current = await this.keyHooks(userId, keyId);
      const next = await change(current);
      if (typeof next === 'string') return next;
      const written = await this.putIf(
        { ...webhookKeys.keyHooks(userId, keyId), ...next, rev: (current?.rev ?? 0) + 1 },
        current ? 'rev = :rev' : 'attribute_not_exists(#pk)',
        current ? { ':rev': current.rev } : {},
      );
      if (written) return 'reserved';
    }
    throw new WebhookPlacesContended();
  }

  /**
   * Takes one of the key's `max` places for `webhookId` at `at` ('held' if
   * it has one already). At the limit, places whose webhook item never came
   * (a create that died, a delete cut off) are given back first.
   */
  reserve(userId: string, keyId: string, webhookId: string, at: Date, max: number): Promise<Reserved> {
    return this.changePlaces(userId, keyId, async (current) => {
      if (current?.closed) return 'closed';
      const hooks = { ...(current?.hooks ?? {}) };
      if (webhookId in hooks) return 'held';
      if (Object.keys(hooks).length >= max) {
        for (const [id, since] of Object.entries(hooks)) {
          if (at.getTime() - Date.parse(since) <= STALE_PLACE_MS) continue;
          // No item (a create that died), or a delete that took effect and was cut off before giving the place back.
          const held = await this.webhook(id);
          if (!held || held.deleted_at) delete hooks[id];
        }
        if (Object.keys(hooks).length >= max) return 'full';
      }
      hooks[webhookId] = at.toISOString();
      return { type: 'KEYHOOKS', hooks, rev: 0, ...(current?.closed ? { closed: true as const } : {}) };
    });
  }

  /** Gives a place back (a delete, a create that failed). */
  async release(userId: string, keyId: string, webhookId: string): Promise<void> {
    await this.changePlaces(userId, keyId, async (current) => {
      if (!current || !(webhookId in current.hooks)) return 'held';
      const hooks = { ...current.hooks };
      delete hooks[webhookId];
      return { ...current, hooks };
    });
  }

  /** The key is closed: no place is taken again. Answers every webhook that ever held one and still may. */
  async closePlaces(userId: string, keyId: string): Promise<string[]> {
    let ids: string[] = [];
    // A key that never had a webhook has no places to close: a create racing the close checks the key again after
    // writing its webhook, and undoes it (webhook-manager.ts), so one read is all a retire pays for a key without webhooks.
    await this.changePlaces(userId, keyId, async (current) => {
      ids = Object.keys(current?.hooks ?? {});
      return !current || current.closed ? 'held' : { type: 'KEYHOOKS', hooks: current.hooks, rev: 0, closed: true };
    });
    return ids;
  }

  /** The webhook's item, only where none exists (a closing may have written its tombstone first: then false). */
  putWebhook(item: WebhookItem): Promise<boolean> {
    return this.putIf({ ...webhookKeys.webhook(item.webhook_id), ...item }, 'attribute_not_exists(#pk)');
  }

  async putScopeEntry(feed: string, webhookId: string, state: ScopeEntryState): Promise<void> {
    await this.put({ ...webhookKeys.scopeEntry(feed, webhookId), type: 'WHSCOPE', webhook_id: webhookId, state });
  }

  async deleteScopeEntry(feed: string, webhookId: string): Promise<void> {
    await this.delete(webhookKeys.scopeEntry(feed, webhookId));
  }

  /**
   * The webhook dies with its key: its item becomes a tombstone (ids and
   * `key_closed` only, no URL, no secret), written whether or not the item
   * exists yet, so a create still in flight cannot put it afterwards, and
   * every delivery write (each conditional on the item's state) fails from
   * here on. A webhook that was live (its URL there, or a tombstone saying
   * so) keeps `closed_live`: its closing has an audit line (claimClosed).
   * Answers the item as it was (undefined: none yet).
   */
  async closeWebhook(webhookId: string, at: Date): Promise<WebhookItem | undefined> {
    const before = await this.webhook(webhookId);
    const live = before?.url !== undefined || before?.closed_live === true;
    await this.update(
      webhookKeys.webhook(webhookId),
      `SET key_closed = :t, ${live ? 'closed_live = :t, ' : ''}#state = :disabled, disabled_reason = :reason, disabled_at = if_not_exists(disabled_at, :at), #type = :type, webhook_id = :id REMOVE #url, secret, previous_secret, inflight, #cursor`,
      undefined,
      { ':t': true, ':disabled': 'disabled', ':reason': 'key_closed', ':at': at.toISOString(), ':type': 'WEBHOOK', ':id': webhookId },
      { '#state': 'state', '#url': 'url', '#type': 'type', '#cursor': 'cursor' },
    );
    return before;
  }

  /** The closing's audit line, claimed (webhook-table.ts): true for the one call that writes it. */
  claimClosed(webhookId: string, claim: string): Promise<boolean> {
    return this.claim(webhookKeys.webhook(webhookId), 'audited_closed', claim, 'closed_live = :t', { ':t': true });
  }

  /**
   * A delete takes effect: the webhook disabled, its URL and secrets
   * dropped, `deleted_at` set (kept from the first time), so no delivery
   * starts or moves it from here on and no read shows it; its scope entry,
   * item and place go after (the delete's retry finishes what a cut-off one
   * left). Undefined when there is no item, or its key closed it first.
   */
  markDeleted(webhookId: string, at: Date): Promise<WebhookItem | undefined> {
    return this.update<WebhookItem>(
      webhookKeys.webhook(webhookId),
      'SET #state = :disabled, deleted_at = if_not_exists(deleted_at, :at) REMOVE #url, secret, previous_secret, inflight',
      'attribute_exists(#pk) AND attribute_not_exists(key_closed)',
      { ':disabled': 'disabled', ':at': at.toISOString() },
      { '#state': 'state', '#url': 'url' },
    );
  }

  /** The delete's audit line, claimed: true for the one call that writes it. */
  claimDeleted(webhookId: string, claim: string): Promise<boolean> {
    return this.claim(webhookKeys.webhook(webhookId), 'audited_deleted', claim, 'attribute_exists(deleted_at)');
  }

  /** Deletes the webhook's item (after markDeleted); a tombstone its key's closing wrote meanwhile stays. */
  async deleteWebhook(webhookId: string): Promise<void> {
    await this.delete(webhookKeys.webhook(webhookId), 'attribute_not_exists(key_closed)');
  }

  /** The new secret; the one before signs too until `until`. Undefined if the webhook is gone or closed. */
  rotate(webhookId: string, sealed: string, at: Date, until: Date): Promise<WebhookItem | undefined> {
    return this.update<WebhookItem>(
      webhookKeys.webhook(webhookId),
      'SET previous_secret = secret, previous_until = :until, secret = :secret, secret_rotated_at = :at',
      'attribute_exists(secret) AND attribute_not_exists(key_closed)',
      { ':until': until.toISOString(), ':secret': sealed, ':at': at.toISOString() },
    );
  }

  /**
   * A disabled webhook active again, from where it stopped: its cursor kept, and the delivery it was making, if any,
   * kept too (the same `webhook-id`, held to the same page: a receiver that took it once and keeps only the first of
   * an id must not find a later change under it), due now and counted as failing from now. Undefined unless it was
   * disabled, its key is open and no delete took effect; the disable's audit claim is cleared, so the next disable
   * has its line.
   */
  async resume(webhookId: string, at: Date): Promise<WebhookItem | undefined> {
    const disabled = '#state = :disabled AND attribute_not_exists(key_closed) AND attribute_not_exists(deleted_at)';
    const names = { '#state': 'state' };
    return (
      (await this.update<WebhookItem>(
        webhookKeys.webhook(webhookId),
        'SET #state = :active, inflight.first_at = :at REMOVE disabled_reason, disabled_at, failing_since, audited_disabled, inflight.next_at, inflight.lease_until',
        `${disabled} AND attribute_exists(inflight)`,
        { ':active': 'active', ':disabled': 'disabled', ':at': at.toISOString() },
        names,
      )) ??
      this.update<WebhookItem>(webhookKeys.webhook(webhookId), 'SET #state = :active REMOVE disabled_reason, disabled_at, failing_since, audited_disabled', `${disabled} AND attribute_not_exists(inflight)`, { ':active': 'active', ':disabled': 'disabled' }, names)
    );
  }
}
