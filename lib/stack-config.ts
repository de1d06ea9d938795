/**
 * The CDK app's settings, from context (`-c key=value` or cdk.json), parsed
 * once with zod so a bad value fails synth with its name.
 */
import * as z from 'zod';
import { USER_EVENTS_VARIANTS } from '../lambdas/core/config.js';
import { LOG_LEVELS } from '../lambdas/http/logger.js';

export const STAGES = ['staging', 'production'] as const;
export type Stage = (typeof STAGES)[number];

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
    /** SNS topic the alarms notify (optional). */
    alarmTopicArn: z.string().startsWith('arn:').optional(),
    /** CloudFront in front of the Embed API (on unless `-c embedCdn=false`). */
    embedCdn: z.stringbool().default(true),
    /** An existing CloudFront-scope web ACL (us-east-1) for the Embed distribution, e.g. EmbedWaf's output. */
    embedWebAclArn: z.string().regex(/^arn:aws[a-z-]*:wafv2:us-east-1:\d{12}:global\/webacl\//).optional(),
    /** Also synthesize the us-east-1 EmbedWaf stack (its rate-based rule's limit per IP per 5 minutes). */
    embedWaf: z.stringbool().default(false),
    embedWafRateLimit: z.coerce.number().int().min(10).max(2_000_000_000).default(1_000),
    /** Powertools log level of every function (POWERTOOLS_LOG_LEVEL). */
    logLevel: z.enum(LOG_LEVELS).default('INFO'),
    /** Share of invocations logged at DEBUG whatever the level (POWERTOOLS_LOGGER_SAMPLE_RATE); default 0.1 in staging, 0.01 in production. */
    logSampleRate: z.coerce.number().min(0).max(1).optional(),
  })
  .refine((c) => (c.domainName === undefined) === (c.certificateArn === undefined), {
    error: 'domainName and certificateArn go together',
    path: ['domainName'],
  })
  .refine((c) => c.embedCdn || c.embedWebAclArn === undefined, {
    error: 'embedWebAclArn needs the CloudFront distribution (embedCdn=true)',
    path: ['embedWebAclArn'],
  });

export type StackConfig = Omit<z.infer<typeof stackConfigSchema>, 'logSampleRate'> & { logSampleRate: number };

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
    'embedCdn',
    'embedWebAclArn',
    'embedWaf',
    'embedWafRateLimit',
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
  return { ...parsed.data, logSampleRate: parsed.data.logSampleRate ?? DEFAULT_SAMPLE_RATE[parsed.data.stage] };
}
