/**
 * Runtime configuration, parsed once with zod. In Lambda it comes from the
 * environment the CDK stack sets; the local server builds the same object from
 * its CLI flags. Nothing else reads process.env.
 */
import * as z from 'zod';

export const USER_EVENTS_VARIANTS = ['typed', 'dated'] as const;
export type UserEventsVariant = (typeof USER_EVENTS_VARIANTS)[number];

export const configSchema = z.object({
  tableName: z.string().min(1),
  /** Names the key header `x-{serviceName}-api-key` (PRODUCT P2). */
  serviceName: z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/, { error: 'lower-case letters, digits and "-", at most 32' }),
  /** Base of public links and default images; no trailing slash. */
  siteUrl: z.url().transform((u) => u.replace(/\/+$/, '')),
  userEventsVariant: z.enum(USER_EVENTS_VARIANTS),
  /** Embed responses' Cache-Control max-age, seconds (shortened before a status change). */
  embedCacheMaxAgeSeconds: z.number().int().min(0).max(86_400).default(60),
  /** Only for dynalite (local server, tests). */
  dynamoEndpoint: z.url().optional(),
  /** The changes feeds' cursor key (Secrets Manager); set on the feed functions only. */
  cursorSecretArn: z.string().regex(/^arn:aws[a-z-]*:secretsmanager:/, { error: 'a Secrets Manager secret ARN' }).optional(),
});

export type Config = z.infer<typeof configSchema>;

const envSchema = z.object({
  TABLE_NAME: z.string(),
  SERVICE_NAME: z.string().default('events'),
  SITE_URL: z.string(),
  USER_EVENTS_VARIANT: z.string().default('typed'),
  EMBED_CACHE_MAX_AGE: z.coerce.number().default(60),
  DYNAMODB_ENDPOINT: z.string().optional(),
  CURSOR_SECRET_ARN: z.string().optional(),
});

/** Throws one error naming every bad variable, so a misconfigured function fails at cold start. */
export function configFromEnv(env: Record<string, string | undefined>): Config {
  const raw = envSchema.safeParse(env);
  if (!raw.success) throw new Error(`Invalid configuration: ${z.prettifyError(raw.error)}`);
  const parsed = configSchema.safeParse({
    tableName: raw.data.TABLE_NAME,
    serviceName: raw.data.SERVICE_NAME,
    siteUrl: raw.data.SITE_URL,
    userEventsVariant: raw.data.USER_EVENTS_VARIANT,
    embedCacheMaxAgeSeconds: raw.data.EMBED_CACHE_MAX_AGE,
    dynamoEndpoint: raw.data.DYNAMODB_ENDPOINT,
    cursorSecretArn: raw.data.CURSOR_SECRET_ARN,
  });
  if (!parsed.success) throw new Error(`Invalid configuration: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
