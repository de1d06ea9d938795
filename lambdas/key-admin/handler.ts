/**
 * The key-management API's function: create, list and revoke a user's keys
 * for the web product, behind an API Gateway REST API that only AWS IAM
 * (SigV4) callers reach (lib/key-admin.ts); locally behind the SigV4 check of
 * local/key-admin-server.ts. The key manager (lambdas/key-admin/key-manager.ts) does the
 * work and keeps its guarantees; this adapter parses with zod, maps refusals
 * to 4xx envelopes naming the field, and audits.
 *
 * Audit: every create, replayed create, revoke and refusal is one log line
 * with the caller (the IAM identity API Gateway verified), the user id and
 * the key id, never the key or its
 * hash, and one count in the KeyOperations metric by operation (an alarm
 * watches bursts of creates). A revoke's line is the key store's audit
 * (lambdas/store/keys/key-store.ts): written once for every revoke that took
 * effect, whatever this request then answers (a 503 after the revoke when
 * API Gateway throttled the plan key's deletion, a crash, then a retry
 * answering 409), and for the keys a create's takeover
 * or a reclaimed slot revokes.
 *
 * The same function runs the key tasks the ingest and a schedule invoke
 * directly (tasks.ts: a deleted user's keys closed, the plan keys swept):
 * `buildKeyAdminFunction` tells them from API Gateway's events.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import * as z from 'zod';
import { KeyManagementError, KeyManager, type KeyErrorCode } from './key-manager.js';
import { ApiGatewayPlanKeys } from './usage-plan.js';
import { createDocumentClient } from '../store/table/client.js';
import { MESSAGES, SERVICE_BUSY_RETRY_AFTER_SECONDS } from '../core/errors.js';
import { isThrottle } from '../store/table/throttling.js';
import { USER_ID_PATTERN } from '../core/ids.js';
import { errorBody, jsonResponse } from '../http/envelope.js';
import { errorFields, type Logger } from '../http/logger.js';
import { DIMENSIONS, METRICS, type KeyOperation, type MetricsSink } from '../http/metrics.js';
import { lambdaLogger, lambdaMetrics } from '../http/powertools.js';
import { KEY_ADMIN_BASE_PATH, keyAdminRouteFor } from './routes.js';
import { KEY_ID_PATTERN, createKeyBody, keyIdParam, listQuery, userIdParam } from './schemas.js';
import { revokeAudit } from './revoke-audit.js';
import { buildKeyTasks, isKeyTask, type KeyTask, type KeyTaskResult } from './tasks.js';
import { WebhookError, type WebhookManager } from './webhook-manager.js';
import { handleWebhookRequest, isWebhookOperation } from './webhook-handler.js';
import { lambdaWebhookManager } from './webhook-lambda.js';
import { webhookAudit } from './webhook-audit.js';

export interface KeyAdminDeps {
  manager: KeyManager;
  /** A key's webhooks (PRODUCT P18); without it their routes answer 404. */
  webhooks?: WebhookManager;
  logger: Logger;
  metrics: MetricsSink;
}

export type KeyAdminHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

const STATUS: Record<KeyErrorCode, number> = {
  UNKNOWN_USER: 404,
  UNKNOWN_KEY: 404,
  LIMIT_REACHED: 409,
  ALREADY_REVOKED: 409,
  REVOKED_WHILE_CREATING: 409,
  IN_PROGRESS: 409,
  IDEMPOTENCY_MISMATCH: 422,
  CREATE_LIMIT: 429,
  BUSY: 503,
  BAD_NAME: 400,
  BAD_SCOPE: 400,
  BAD_CURSOR: 400,
  // Only a tool resolving a username meets it (the CLI); the API names users by id.
  AMBIGUOUS_USER: 409,
};

/** The answer to the first release's `DELETE /keys/{keyId}`, which named no user. */
export const REVOKE_MOVED_MESSAGE = `Revoke with DELETE ${KEY_ADMIN_BASE_PATH}/users/{userId}/keys/{keyId}: a revoke names the key's owner by user id`;

/** The answer to a create that names its user by username (the API before keys belonged to user ids). */
export const USERNAME_REFUSED_MESSAGE = 'Name the user by userId (the user id, usr_…), not by username: usernames change and are reused, a key belongs to a user id';

class Refusal extends Error {
  constructor(
    readonly statusCode: number,
    readonly field: string,
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** Who called: the IAM identity API Gateway (or the local stand-in) verified. */
function callerOf(event: APIGatewayProxyEvent): string {
  const id = event.requestContext?.identity;
  return id?.userArn ?? id?.caller ?? 'unknown';
}

function parseJson(body: string | null, isBase64Encoded: boolean): unknown {
  try {
    return JSON.parse(isBase64Encoded ? Buffer.from(body ?? '', 'base64').toString('utf8') : (body ?? ''));
  } catch {
    throw new Refusal(400, 'body', 'The body must be a JSON object', 'BAD_BODY');
  }
}

function fromZod(error: z.ZodError): Refusal {
  const issue = error.issues[0];
  const field = issue?.path.length ? issue.path.map(String).join('.') : 'body';
  const message = issue?.code === 'unrecognized_keys' ? `Unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}` : (issue?.message ?? 'Invalid request');
  return new Refusal(400, issue?.code === 'unrecognized_keys' ? issue.keys[0]! : field, message, 'BAD_INPUT');
}

function parse<T>(schema: z.ZodType<T>, value: unknown, field?: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const refusal = fromZod(result.error);
  throw field ? new Refusal(400, field, refusal.message, refusal.code) : refusal;
}

/** What an audit line may carry of what the caller sent: a user id or key id of the right form, else only that it was not one. */
const auditable = (pattern: RegExp) => (value: unknown): string | undefined =>
  value === undefined || value === null || value === ''
    ? undefined
    : typeof value === 'string' && pattern.test(value) && !LOOKS_LIKE_A_KEY.test(value)
      ? value
      : '(malformed)';
/** A key sent in the wrong field (keys begin with pk_) is never written to the log. */
const LOOKS_LIKE_A_KEY = /^pk_.{17,}$/;
const auditUserId = auditable(USER_ID_PATTERN);
const auditKeyId = auditable(KEY_ID_PATTERN);

/** The request or task a revoke's audit line belongs to: the key store writes it deep inside the manager, requests may overlap. */
const current = new AsyncLocalStorage<{ caller: string }>();

/** The function's entry: a key task invoked directly (tasks.ts; bounded by the invocation's time when Lambda's context is given), else a request of the API. */
export function buildKeyAdminFunction(deps: KeyAdminDeps): (event: APIGatewayProxyEvent | KeyTask, context?: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<APIGatewayProxyResult | KeyTaskResult> {
  const api = buildKeyAdmin(deps);
  const tasks = buildKeyTasks(deps.manager.store, deps.logger);
  return (event, context) => {
    if (!isKeyTask(event)) return api(event as APIGatewayProxyEvent);
    const remainingMs = context?.getRemainingTimeInMillis ? () => context.getRemainingTimeInMillis() : undefined;
    return current.run({ caller: `task:${(event as KeyTask).task}` }, () => tasks(event, remainingMs));
  };
}

export function buildKeyAdmin({ manager, webhooks, logger, metrics }: KeyAdminDeps): KeyAdminHandler {
  const count = (operation: KeyOperation) => metrics.publish({ [DIMENSIONS.operation]: operation }, [{ name: METRICS.keyOperations, unit: 'Count', value: 1 }]);
  const caller = () => ({ caller: current.getStore()?.caller ?? 'unknown' });
  manager.store.audit = revokeAudit(logger, metrics, caller);
  // A key's retire closes its webhooks (a revoke, a user's deletion, the sweep), and the webhook routes change them: each on the record, naming the caller.
  manager.store.webhookAudit = webhookAudit(logger, metrics, caller);
  if (webhooks) webhooks.audit = manager.store.webhookAudit;
  return (event) => {
    const caller = callerOf(event);
    return current.run({ caller }, () => handle(event, caller));
  };

  async function handle(event: APIGatewayProxyEvent, caller: string): Promise<APIGatewayProxyResult> {
    const route = keyAdminRouteFor(event.resource, event.httpMethod);
    // Whom the request is about, for every audit line, refusals included (as sent, until parsed).
    const about: { userId?: string; keyId?: string; webhookId?: string } = { userId: auditUserId(event.pathParameters?.userId), keyId: auditKeyId(event.pathParameters?.keyId) };
    try {
      switch (route?.op) {
        case 'create': {
          const raw = parseJson(event.body, event.isBase64Encoded);
          const sent = raw as { userId?: unknown; username?: unknown } | null;
          about.userId = auditUserId(sent?.userId);
          if (sent && typeof sent === 'object' && 'username' in sent && !('userId' in sent)) throw new Refusal(400, 'username', USERNAME_REFUSED_MESSAGE, 'BAD_INPUT');
          const body = parse(createKeyBody, raw);
          const result = await manager.createOnce(body);
          about.keyId = result.info.keyId;
          if (result.created) {
            count('created');
            logger.info('Key created', { caller, userId: result.userId, keyId: result.info.keyId, scopes: result.info.scopes });
            return jsonResponse(201, { success: true, message: 'Key created. This is the only time the key is shown: store it now.', data: { key: result.key, ...result.info, replayed: false } });
          }
          count('replayed');
          logger.info('Key create replayed', { caller, userId: result.userId, keyId: result.info.keyId });
          return jsonResponse(200, {
            success: true,
            message: 'This idempotencyKey already created this key; the key itself is shown only once and is not repeated.',
            data: { ...result.info, replayed: true },
          });
        }
        case 'list': {
          const userId = parse(userIdParam, event.pathParameters?.userId, 'userId');
          const query = parse(listQuery, event.queryStringParameters ?? {});
          const page = await manager.list(userId, query);
          return jsonResponse(200, { success: true, message: `${page.keys.length} key(s)`, data: page.keys, cursor: page.cursor });
        }
        case 'revoke': {
          const userId = parse(userIdParam, event.pathParameters?.userId, 'userId');
          const keyId = parse(keyIdParam, event.pathParameters?.keyId, 'keyId');
          // Its audit line and count are written by the store as the revoke takes effect (above).
          const info = await manager.revoke(userId, keyId);
          return jsonResponse(200, { success: true, message: 'Key revoked: requests with it are refused from now on.', data: info });
        }
        case 'revokeWithoutUser':
          throw new Refusal(410, 'keyId', REVOKE_MOVED_MESSAGE, 'REVOKE_NEEDS_USER');
        default:
          if (webhooks && isWebhookOperation(route?.op)) return await handleWebhookRequest(webhooks, route.op, event, parse, () => parseJson(event.body, event.isBase64Encoded), about);
          return jsonResponse(404, errorBody(MESSAGES.resourceNotFound));
      }
    } catch (error) {
      const refusal =
        error instanceof KeyManagementError || error instanceof WebhookError
          ? new Refusal(error instanceof WebhookError ? error.statusCode : STATUS[error.code], error.field, error.message, error.code)
          : error instanceof Refusal
            ? error
            : undefined;
      if (error instanceof KeyManagementError && error.keyId) about.keyId = error.keyId;
      if (!refusal && isThrottle(error)) {
        // The table, or API Gateway's plan-key calls, stayed throttled through the SDK's retries: nothing is wrong with the
        // request, and a create or revoke cut off half-way is finished by its retry (idempotency key; ALREADY_REVOKED), so
        // the answer says when to retry.
        logger.warn('Key management throttled; answered 503', { caller, operation: route?.op, ...about, ...errorFields(error) });
        return jsonResponse(503, { ...errorBody(MESSAGES.serviceBusy), code: 'BUSY' }, { 'Retry-After': String(SERVICE_BUSY_RETRY_AFTER_SECONDS) });
      }
      if (!refusal) {
        logger.error('Key management failed', { caller, operation: route?.op, ...about, ...errorFields(error) });
        return jsonResponse(500, errorBody(MESSAGES.internal));
      }
      count('refused');
      logger.warn('Key management request refused', { caller, operation: route?.op, code: refusal.code, field: refusal.field, ...about });
      return jsonResponse(refusal.statusCode, { ...errorBody(refusal.message, [{ field: refusal.field, message: refusal.message }]), code: refusal.code });
    }
  }
}

const envSchema = z.object({ TABLE_NAME: z.string().min(1), USAGE_PLAN_ID: z.string().min(1) });

type Entry = (event: APIGatewayProxyEvent | KeyTask, context: Context) => Promise<APIGatewayProxyResult | KeyTaskResult>;

function lambdaHandler(): Entry {
  const parsed = envSchema.safeParse(process.env);
  if (!parsed.success) throw new Error(`Invalid configuration: ${z.prettifyError(parsed.error)}`);
  const logger = lambdaLogger();
  const metrics = lambdaMetrics();
  const client = createDocumentClient();
  const manager = new KeyManager(client, parsed.data.TABLE_NAME, {
    planKeys: new ApiGatewayPlanKeys(new APIGatewayClient({}), parsed.data.USAGE_PLAN_ID),
  });
  const webhooks = lambdaWebhookManager(client, parsed.data.TABLE_NAME, manager, logger, metrics, () => ({ caller: current.getStore()?.caller ?? 'unknown' }));
  const handler = buildKeyAdminFunction({ manager, webhooks, logger, metrics });
  // Request id, cold start and function name on every line; never the event (a create's answer carries the key, its body the name).
  return middy(handler).use(injectLambdaContext(logger, { resetKeys: true, logEvent: false })) as unknown as Entry;
}

// Built at cold start in Lambda (a bad configuration fails the init); importing the module elsewhere has no side effects.
let built: ReturnType<typeof lambdaHandler> | undefined = process.env.AWS_LAMBDA_FUNCTION_NAME ? lambdaHandler() : undefined;
export const handler: Entry = (event, context) => (built ??= lambdaHandler())(event, context);
