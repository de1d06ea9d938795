/**
 * Everything a handler may use, built once per container (Lambda) or once per
 * server (local) and injected; handlers never construct clients.
 */
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayProxyResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { systemClock, type Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { CursorKeyring } from '../core/feed-cursor.js';
import type { ApiKeyReader, EventReader, EventSearcher, FeedReader } from '../core/ports.js';
import { noKeyring, secretsManagerKeyring } from './cursor-keys.js';
import { createDocumentClient } from '../store/table/client.js';
import { DynamoRepository } from '../store/reads/repository.js';
import { errorFields, silentLogger, type Logger } from './logger.js';
import { noMetrics, type MetricsSink } from './metrics.js';

export interface Deps {
  config: Config;
  reader: EventReader;
  /** Discovery's read (PRODUCT P17). */
  search: EventSearcher;
  keys: ApiKeyReader;
  /** The changes feeds (PRODUCT P16). */
  feeds: FeedReader;
  /** The feeds' cursor keys (read only by the functions that have them). */
  cursorKeys: CursorKeyring;
  clock: Clock;
  logger: Logger;
  metrics: MetricsSink;
}

export type HttpHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
export type AuthorizerHandler = (event: APIGatewayRequestAuthorizerEvent, context: Context) => Promise<APIGatewayAuthorizerResult>;

/** What every file in lambdas/handlers exports (checked by test/unit/routes.test.ts). */
export interface HandlerModule<H = HttpHandler | AuthorizerHandler> {
  build: (deps: Deps) => H;
  handler: H;
}

export function createDeps(config: Config, overrides: Partial<Omit<Deps, 'config'>> = {}): Deps {
  let repository: DynamoRepository | undefined;
  const repo = () => (repository ??= new DynamoRepository(createDocumentClient({ endpoint: config.dynamoEndpoint }), config.tableName));
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? silentLogger;
  // A failed read is otherwise silent while the keys read before still serve (cursor-keys.ts).
  const secretKeyring = (arn: string) => secretsManagerKeyring(arn, undefined, clock, (error) => logger.warn('Cursor key secret not read', errorFields(error)));
  return {
    config,
    reader: overrides.reader ?? repo(),
    search: overrides.search ?? repo(),
    keys: overrides.keys ?? repo(),
    feeds: overrides.feeds ?? repo(),
    cursorKeys: overrides.cursorKeys ?? (config.cursorSecretArn ? secretKeyring(config.cursorSecretArn) : noKeyring),
    clock,
    logger,
    metrics: overrides.metrics ?? noMetrics,
  };
}
