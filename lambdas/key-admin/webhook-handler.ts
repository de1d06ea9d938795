/**
 * The key-management API's webhook routes (PRODUCT P18; routes.ts): parse
 * with zod (each refusal a 400 naming its field), call the webhook manager,
 * answer the envelope. Refusals are thrown (WebhookError, or the parse's)
 * and rendered by the key-management handler like a key's (handler.ts), so
 * the two share one audit of refusals and one error shape.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import * as z from 'zod';
import { createWebhookBody, WEBHOOK_ID_PATTERN } from '../core/webhook-rules.js';
import { jsonResponse } from '../http/envelope.js';
import type { KeyAdminOperation } from './routes.js';
import { keyIdParam, userIdParam } from './schemas.js';
import type { WebhookManager } from './webhook-manager.js';

export const webhookIdParam = z.string().regex(WEBHOOK_ID_PATTERN, { error: 'webhookId must look like wh_…' });

export type WebhookOperation = Extract<KeyAdminOperation, 'createWebhook' | 'listWebhooks' | 'getWebhook' | 'deleteWebhook' | 'rotateWebhookSecret' | 'resumeWebhook'>;
const WEBHOOK_OPERATIONS: readonly string[] = ['createWebhook', 'listWebhooks', 'getWebhook', 'deleteWebhook', 'rotateWebhookSecret', 'resumeWebhook'];
export const isWebhookOperation = (op: string | undefined): op is WebhookOperation => op !== undefined && WEBHOOK_OPERATIONS.includes(op);

/** The parse the key-management handler uses: a value through a schema, or its refusal naming the field. */
export type Parse = <T>(schema: z.ZodType<T>, value: unknown, field?: string) => T;

/** `ids`: the user, key and webhook the request is about, filled in as they are parsed (for the audit line). */
export async function handleWebhookRequest(
  manager: WebhookManager,
  op: WebhookOperation,
  event: APIGatewayProxyEvent,
  parse: Parse,
  body: () => unknown,
  ids: { userId?: string; keyId?: string; webhookId?: string },
): Promise<APIGatewayProxyResult> {
  const userId = parse(userIdParam, event.pathParameters?.userId, 'userId');
  const keyId = parse(keyIdParam, event.pathParameters?.keyId, 'keyId');
  ids.userId = userId;
  ids.keyId = keyId;
  if (op === 'createWebhook') {
    const input = parse(createWebhookBody, body());
    const made = await manager.create(userId, keyId, input);
    ids.webhookId = made.info.webhookId;
    if (made.created) {
      return jsonResponse(201, { success: true, message: 'Webhook created. This is the only time its secret is shown: store it now.', data: { ...made.info, secret: made.secret, replayed: false } });
    }
    return jsonResponse(200, { success: true, message: 'This idempotencyKey already created this webhook; its secret is shown only once (rotate it if it was lost).', data: { ...made.info, replayed: true } });
  }
  if (op === 'listWebhooks') {
    const hooks = await manager.list(userId, keyId);
    return jsonResponse(200, { success: true, message: `${hooks.length} webhook(s)`, data: hooks });
  }
  const webhookId = parse(webhookIdParam, event.pathParameters?.webhookId, 'webhookId');
  ids.webhookId = webhookId;
  switch (op) {
    case 'getWebhook':
      return jsonResponse(200, { success: true, message: `Webhook ${webhookId}`, data: await manager.get(userId, keyId, webhookId) });
    case 'deleteWebhook':
      await manager.delete(userId, keyId, webhookId);
      return jsonResponse(200, { success: true, message: 'Webhook deleted: no delivery of it starts from now on.', data: { webhookId, deleted: true } });
    case 'rotateWebhookSecret': {
      const rotated = await manager.rotate(userId, keyId, webhookId);
      return jsonResponse(200, {
        success: true,
        message: 'Secret rotated. This is the only time it is shown; deliveries carry the previous secret\'s signature too for 24 hours.',
        data: { ...rotated.info, secret: rotated.secret },
      });
    }
    case 'resumeWebhook':
      return jsonResponse(200, { success: true, message: 'Webhook resumed from where it stopped.', data: await manager.resume(userId, keyId, webhookId) });
  }
}
