/**
 * The CDK app's settings, from context (`-c key=value` or cdk.json), parsed
 * once with zod so a bad value fails synth with its name.
 */
import * as z from 'zod';
import { USER_EVENTS_VARIANTS } from '../lambdas/core/config.js';
import { LOG_LEVELS } from '../lambdas/http/logger.js';

export const STAGES = ['staging', 'production'] as const;

/** A CloudFront-scope web ACL: WAF keeps those in us-east-1 only. */
export const EMBED_WEB_ACL_ARN_PATTERN = /^arn:aws[a-z-]*:wafv2:us-east-1:\d{12}:global\/webacl\/.+$/;

/** The Public API's abuse limits unless context says otherwise (docs/deploy.md; priced in the flood table of docs/performance.md). */
export const PUBLIC_LIMIT_DEFAULTS = { throttleRate: 100, throttleBurst: 200, wafRateLimit: 1_000 } as const;
export type Stage = (typeof STAGES)[number];

/** Webhook deliveries at once unless context says otherwise: well under a new account's 1,000 concurrent executions, which the API shares. */
export const WEBHOOK_DELIVERY_CONCURRENCY = 50;

export const stackConfigSchema = z
  .object({
    stage: z.enum(STAGES),
    serviceName: z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/).default('events'),
    userEventsVariant: z.enum(USER_EVENTS_VARIANTS).default('typed'),
    siteUrl: z.url().default('https://events.example.com'),
    embedCacheMaxAge: z.coerce.number().int().min(0).max(86_400).default(60),
    /** Custom domain serving both APIs under their spec paths (needs certificateArn). */
    domainName: z.string().min(3).optional(),
    /** Regional ACM certificate for domainName, in the stack's region. */
    certificateArn: z.string().startsWith('arn:').optional(),
    /** An existing SNS topic the alarms notify; without it the stack creates one. */
    alarmTopicArn: z.string().startsWith('arn:').optional(),
    /** Subscribes this address to the topic the stack creates (AWS mails a confirmation link first). */
    alarmEmail: z.email().optional(),
    /**
     * CloudFront in front of the Embed API. Default: on in production, off in
     * staging, so a first deploy on an account CloudFront has not verified yet
     * is not rolled back (docs/deploy.md); on whenever embedWebAclArn is given.
     */
    embedCdn: z.stringbool().optional(),
    /** An existing CloudFront-scope web ACL (us-east-1) for the Embed distribution, e.g. EmbedWaf's output. */
    embedWebAclArn: z.string().regex(EMBED_WEB_ACL_ARN_PATTERN).optional(),
    /**
     * The us-east-1 EmbedWaf stack (its rate-based rule's limit per IP per 5
     * minutes) and its web ACL on the Embed distribution. Default: on in
     * production, off in staging, as the Public API's (publicWaf). Without
     * embedWebAclArn the service stack then takes the ACL's ARN as the
     * deploy-time parameter EmbedWebAclArn (docs/deploy.md).
     */
    embedWaf: z.stringbool().optional(),
    embedWafRateLimit: z.coerce.number().int().min(10).max(2_000_000_000).default(1_000),
    /**
     * How many of discovery's three place indexes the table has (docs/deploy.md):
     * a stack that exists already adds them one deploy at a time (1, then 2,
     * then 3), as DynamoDB creates one index per table update.
     */
    placeIndexes: z.coerce.number().int().min(0).max(3).default(3),
    /**
     * What the indexes that copy only what their reads use copy (docs/deploy.md,
     * "Upgrading a table loaded by an earlier version"): `INCLUDE` (default),
     * those attributes; `ALL`, as tables created before have them. DynamoDB
     * cannot change an index's projection in place, and CloudFormation refuses
     * the update, so a stack deployed before keeps `ALL`; the code reads either.
     */
    indexProjection: z.enum(['INCLUDE', 'ALL']).default('INCLUDE'),
    /** Stage-wide throttle of the Public API (every method, keyed or not): requests per second and burst. */
    publicThrottleRate: z.coerce.number().int().min(1).max(10_000).default(PUBLIC_LIMIT_DEFAULTS.throttleRate),
    publicThrottleBurst: z.coerce.number().int().min(1).max(5_000).default(PUBLIC_LIMIT_DEFAULTS.throttleBurst),
    /** A regional web ACL with a rate-based rule per client IP on the Public stage. Default: on in production only. */
    publicWaf: z.stringbool().optional(),
    /** Requests per client IP per 5 minutes before the Public web ACL blocks it. */
    publicWafRateLimit: z.coerce.number().int().min(10).max(2_000_000_000).default(PUBLIC_LIMIT_DEFAULTS.wafRateLimit),
    /** How many ingest Lambdas the queue may run at once (AWS: 2 to 1000), so a burst of changes leaves concurrency to the API. */
    ingestMaxConcurrency: z.coerce.number().int().min(2).max(1_000).default(2),
    /**
     * Webhook delivery functions at once at most (the FIFO event source's
     * maximum concurrency, AWS: 2 to 1000): each delivers one webhook's
     * deliveries, so this many endpoints are being sent to at a time
     * (docs/deploy.md, docs/performance.md).
     */
    webhookDeliveryConcurrency: z.coerce.number().int().min(2).max(1_000).default(WEBHOOK_DELIVERY_CONCURRENCY),
    /**
     * Where the quota 429's X-RateLimit-Reset and Retry-After come from.
     * `static` (default): only literal header values, the sources AWS documents
     * for gateway responses, so those two headers are left out. `context`:
     * mapped from the authorizer's context (lib/gateway-responses.ts).
     */
    quotaHeaders: z.enum(['static', 'context']).default('static'),
    /**
     * The IAM principals (role ARNs, comma-separated) the key-management API's
     * resource policy lets in: the web product's role. Everyone else is denied
     * there, whatever their own policies allow; without it, everyone is.
     */
    keyAdminCallers: z
      .string()
      .transform((s) => s.split(',').map((a) => a.trim()).filter(Boolean))
      .pipe(z.array(z.string().regex(/^arn:aws[a-z-]*:iam::\d{12}:(role|user)\/[\w+=,.@/-]+$/, { error: 'keyAdminCallers: each must be an IAM role or user ARN (arn:aws:iam::ACCOUNT:role/NAME)' })))
      .default([]),
    /** Powertools log level of every function (POWERTOOLS_LOG_LEVEL). */
    logLevel: z.enum(LOG_LEVELS).default('INFO'),
    /** Share of invocations logged at DEBUG whatever the level (POWERTOOLS_LOGGER_SAMPLE_RATE); default 0.1 in staging, 0.01 in production. */
    logSampleRate: z.coerce.number().min(0).max(1).optional(),
  })
  .refine((c) => (c.domainName === undefined) === (c.certificateArn === undefined), {
    error: 'domainName and certificateArn go together',
    path: ['domainName'],
  })
  .refine((c) => c.alarmEmail === undefined || c.alarmTopicArn === undefined, {
    error: 'alarmEmail subscribes to the topic the stack creates; with alarmTopicArn, subscribe to that topic where it is managed',
    path: ['alarmEmail'],
  })
  .refine((c) => c.embedCdn !== false || c.embedWebAclArn === undefined, {
    error: 'embedWebAclArn needs the CloudFront distribution (embedCdn=true)',
    path: ['embedWebAclArn'],
  });

type Parsed = z.infer<typeof stackConfigSchema>;
export type StackConfig = Omit<Parsed, 'logSampleRate' | 'embedCdn' | 'publicWaf' | 'embedWaf'> & { logSampleRate: number; embedCdn: boolean; publicWaf: boolean; embedWaf: boolean };

const DEFAULT_SAMPLE_RATE: Record<Stage, number> = { staging: 0.1, production: 0.01 };

export function stackConfigFromContext(get: (key: string) => unknown, stage: string): StackConfig {
  const keys = [
    'serviceName',
    'userEventsVariant',
    'siteUrl',
    'embedCacheMaxAge',
    'domainName',
    'certificateArn',
    'alarmTopicArn',
    'alarmEmail',
    'embedCdn',
    'embedWebAclArn',
    'embedWaf',
    'embedWafRateLimit',
    'placeIndexes',
    'indexProjection',
    'publicThrottleRate',
    'publicThrottleBurst',
    'publicWaf',
    'publicWafRateLimit',
    'ingestMaxConcurrency',
    'webhookDeliveryConcurrency',
    'keyAdminCallers',
    'quotaHeaders',
    'logLevel',
    'logSampleRate',
  ];
  const raw: Record<string, unknown> = { stage };
  for (const key of keys) {
    const value = get(key);
    // Context from the command line is a string; from cdk.json or a test it may be a boolean.
    if (value !== undefined && value !== '') raw[key] = typeof value === 'boolean' ? String(value) : value;
  }
  const parsed = stackConfigSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`Invalid CDK context:\n${z.prettifyError(parsed.error)}`);
  const c = parsed.data;
  const production = c.stage === 'production';
  const embedCdn = c.embedCdn ?? (production || c.embedWebAclArn !== undefined);
  return {
    ...c,
    logSampleRate: c.logSampleRate ?? DEFAULT_SAMPLE_RATE[c.stage],
    embedCdn,
    publicWaf: c.publicWaf ?? production,
    // The edge's per-client rule is on wherever the edge is in production, as the Public API's is.
    embedWaf: c.embedWaf ?? (production && embedCdn),
  };
}
