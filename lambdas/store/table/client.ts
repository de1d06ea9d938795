/**
 * DynamoDB clients, created once per container and injected (never imported
 * by handlers). The endpoint override exists for dynalite, locally and in tests.
 */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * The write side's retries, chosen (docs/data-model.md, "Lost responses and
 * retries"): the standard strategy (exponential backoff with jitter, a retry
 * quota) with 5 attempts, not the default 3, so a fan-out that meets
 * throttling on a hot partition rides it out instead of failing the batch.
 * Retrying is safe because every write of the change path is idempotent or
 * recognises its own landed write when a retry fails its condition.
 */
export const WRITE_PATH_RETRY = { maxAttempts: 5, retryMode: 'standard' } as const satisfies Pick<DynamoDBClientConfig, 'maxAttempts' | 'retryMode'>;

/**
 * The change path's connections to DynamoDB at once. The SDK's default is
 * 50 a client, and a call past them waits for a socket, that is for another
 * call's answer: a round trip more, which DynamoDB sees and the code's own
 * waves do not. The ingest applies a batch's 10 records at once on one
 * client, and a new RSVP's widest wave is 9 calls, so a burst of RSVPs had
 * about 90 in flight: one RSVP in three took 9 round trips instead of 8
 * (test/integration/rsvp-burst-round-trips.test.ts counts them at the HTTP
 * level). 256 holds a batch of the widest changes but a fan-out's (8 units at
 * once), well within a Lambda's 1,024 file descriptors.
 */
export const WRITE_PATH_SOCKETS = 256;

/** The change path's client (the ingest Lambda, `data:apply`): createDocumentClient with WRITE_PATH_RETRY and WRITE_PATH_SOCKETS. */
export function createWriteClient(opts: ClientOptions = {}): DynamoDBDocumentClient {
  return createDocumentClient({ ...opts, ...WRITE_PATH_RETRY, maxSockets: WRITE_PATH_SOCKETS });
}

export interface ClientOptions {
  endpoint?: string;
  region?: string;
  /** Tests only: dynalite called in-process instead of over a socket (test/support/in-process-dynalite.ts). */
  requestHandler?: DynamoDBClientConfig['requestHandler'];
}

export function createDocumentClient(opts: ClientOptions & { maxAttempts?: number; retryMode?: string; maxSockets?: number } = {}): DynamoDBDocumentClient {
  const config: DynamoDBClientConfig = {};
  if (opts.requestHandler) config.requestHandler = opts.requestHandler;
  // The SDK's own handler and agents (keep-alive), with more sockets than its 50.
  else if (opts.maxSockets !== undefined) config.requestHandler = { httpAgent: { maxSockets: opts.maxSockets }, httpsAgent: { maxSockets: opts.maxSockets } };
  if (opts.maxAttempts !== undefined) config.maxAttempts = opts.maxAttempts;
  if (opts.retryMode !== undefined) config.retryMode = opts.retryMode;
  if (opts.region) config.region = opts.region;
  if (opts.endpoint) {
    config.endpoint = opts.endpoint;
    config.region ??= 'local';
    // dynalite accepts any credentials; fixed ones keep local runs off the
    // default credential chain (no ~/.aws lookups, no IMDS probes).
    config.credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  }
  return DynamoDBDocumentClient.from(new DynamoDBClient(config), {
    marshallOptions: { removeUndefinedValues: true },
  });
}
