/**
 * DynamoDB clients, created once per container and injected (never imported
 * by handlers). The endpoint override exists for dynalite, locally and in tests.
 */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export function createDocumentClient(opts: { endpoint?: string; region?: string } = {}): DynamoDBDocumentClient {
  const config: DynamoDBClientConfig = {};
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
