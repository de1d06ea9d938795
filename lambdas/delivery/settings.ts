/**
 * What the webhooks' functions read from their environment (PRODUCT P18):
 * the names lib/webhooks.ts and lib/key-admin.ts set, and one zod parse per
 * function at cold start, so a missing or malformed value fails the init
 * naming the variable (ARCHITECTURE rule 4).
 *
 * One setting is local only: ALLOW_LOOPBACK_SETTING lets the outbound guard
 * deliver to receivers on 127.0.0.1 and ::1 (its GuardPolicy's
 * `allowLoopback`). The CDK stack never sets it (test/infra/webhooks.test.ts
 * holds every function of every synthesized template to that); the
 * rehearsal of cdk.out sets it on the functions it runs, so that a receiver
 * on this machine can take their deliveries, as `npm start --
 * --allow-loopback-webhooks` does for the local server.
 */
import * as z from 'zod';
import type { GuardPolicy } from './guard/guard.js';

/** The one value that turns loopback receivers on; anything else but absence fails the cold start. */
export const ALLOW_LOOPBACK_SETTING = 'PUBLIC_EVENTS_LOCAL_ALLOW_LOOPBACK_WEBHOOKS';

/** The variables the stack sets on the webhooks' functions (lib/webhooks.ts), by what they hold. */
export const WEBHOOK_ENV = {
  table: 'TABLE_NAME',
  siteUrl: 'SITE_URL',
  cursorSecret: 'CURSOR_SECRET_ARN',
  /** The KMS key the webhooks' secrets are sealed under (lambdas/store/webhooks/secret-box.ts). */
  secretsKey: 'WEBHOOK_SECRETS_KEY_ARN',
  /** The FIFO queue of wake-ups, one message group per webhook. */
  wakeUpQueue: 'WEBHOOK_QUEUE_URL',
  /** The fan-out's own queue: the rest of a scope's webhooks, a page at a time. */
  fanOutQueue: 'WEBHOOK_FAN_OUT_QUEUE_URL',
} as const;

const siteUrl = z.url().transform((u) => u.replace(/\/+$/, ''));
const arnOf = (service: string) => z.string().regex(new RegExp(`^arn:aws[a-z-]*:${service}:`), { error: `an ARN of ${service}` });

const loopback = { [ALLOW_LOOPBACK_SETTING]: z.literal('true', { error: `${ALLOW_LOOPBACK_SETTING} is "true" or not set` }).optional() };

const schemas = {
  delivery: z.object({
    [WEBHOOK_ENV.table]: z.string().min(1),
    [WEBHOOK_ENV.siteUrl]: siteUrl,
    [WEBHOOK_ENV.cursorSecret]: arnOf('secretsmanager'),
    [WEBHOOK_ENV.secretsKey]: arnOf('kms'),
    [WEBHOOK_ENV.wakeUpQueue]: z.url(),
    ...loopback,
  }),
  fanOut: z.object({
    [WEBHOOK_ENV.table]: z.string().min(1),
    [WEBHOOK_ENV.wakeUpQueue]: z.url(),
    [WEBHOOK_ENV.fanOutQueue]: z.url(),
  }),
  /** What the key-management function needs besides its own (lambdas/key-admin/handler.ts): a webhook's create, rotate and resume. */
  keyAdmin: z.object({
    [WEBHOOK_ENV.siteUrl]: siteUrl,
    [WEBHOOK_ENV.cursorSecret]: arnOf('secretsmanager'),
    [WEBHOOK_ENV.secretsKey]: arnOf('kms'),
    [WEBHOOK_ENV.wakeUpQueue]: z.url(),
    ...loopback,
  }),
};

export type WebhookFunction = keyof typeof schemas;
export type WebhookSettings<F extends WebhookFunction> = z.output<(typeof schemas)[F]>;

/** The function's settings, or an error naming every bad variable (thrown at cold start). */
export function webhookSettings<F extends WebhookFunction>(fn: F, env: Record<string, string | undefined>): WebhookSettings<F> {
  const parsed = schemas[fn].safeParse(env);
  if (!parsed.success) throw new Error(`Invalid configuration: ${z.prettifyError(parsed.error)}`);
  return parsed.data as WebhookSettings<F>;
}

/** The guard's policy: loopback receivers only under the explicit local setting. */
export function guardPolicy(settings: { [ALLOW_LOOPBACK_SETTING]?: 'true' }): GuardPolicy {
  return { allowLoopback: settings[ALLOW_LOOPBACK_SETTING] === 'true' };
}
