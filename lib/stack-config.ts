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
    /** Powertools log level of every function (POWERTOOLS_LOG_LEVEL). */
    logLevel: z.enum(LOG_LEVELS).default('INFO'),
    /** Share of invocations logged at DEBUG whatever the level (POWERTOOLS_LOGGER_SAMPLE_RATE); default 0.1 in staging, 0.01 in production. */
    logSampleRate: z.coerce.number().min(0).max(1).optional(),
  })
  .refine((c) => (c.domainName === undefined) === (c.certificateArn === undefined), {
    error: 'domainName and certificateArn go together',
    path: ['domainName'],
  });

export type StackConfig = Omit<z.infer<typeof stackConfigSchema>, 'logSampleRate'> & { logSampleRate: number };

const DEFAULT_SAMPLE_RATE: Record<Stage, number> = { staging: 0.1, production: 0.01 };

export function stackConfigFromContext(get: (key: string) => unknown, stage: string): StackConfig {
  const keys = ['serviceName', 'userEventsVariant', 'siteUrl', 'embedCacheMaxAge', 'domainName', 'certificateArn', 'alarmTopicArn', 'logLevel', 'logSampleRate'];
  const raw: Record<string, unknown> = { stage };
  for (const key of keys) {
    const value = get(key);
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = stackConfigSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`Invalid CDK context:\n${z.prettifyError(parsed.error)}`);
  return { ...parsed.data, logSampleRate: parsed.data.logSampleRate ?? DEFAULT_SAMPLE_RATE[parsed.data.stage] };
}
