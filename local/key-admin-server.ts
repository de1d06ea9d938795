/**
 * The key-management API locally: its own loopback port (never the Public
 * and Embed port), every request checked by the SigV4 stand-in for IAM
 * (sigv4-check.ts) before it reaches the same handler the Lambda runs, with
 * the verified identity in requestContext.identity as API Gateway sets it.
 * There is no usage plan locally, as for `npm run keys -- --endpoint`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Clock } from '../lambdas/core/clock.js';
import type { KeyAdminHandler } from '../lambdas/key-admin/handler.js';
import { KEY_ADMIN_BASE_PATH, matchKeyAdminPath } from '../lambdas/key-admin/routes.js';
import { KEEP_ALIVE_MS } from './http-server.js';
import { LOCAL_KEY_ADMIN_PRINCIPAL, verifySigV4, type LocalPrincipal } from './sigv4-check.js';

/** API Gateway's payload limit is 10 MB; nothing here needs more than a few hundred bytes. */
const MAX_BODY_BYTES = 16 * 1024;

export interface KeyAdminServer {
  /** The base URL clients use: http://127.0.0.1:{port}/admin/v1 */
  url: string;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) resolve(null);
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, result: APIGatewayProxyResult, requestId: string): void {
  res.writeHead(result.statusCode, { ...(result.headers as Record<string, string>), 'x-amzn-requestid': requestId });
  res.end(result.body);
}

const denied = (message: string): APIGatewayProxyResult => ({ statusCode: 403, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message }) });

export async function startKeyAdminServer(opts: {
  port: number;
  handler: KeyAdminHandler;
  /** The time signatures are checked against. */
  clock: Clock;
  principals?: readonly LocalPrincipal[];
}): Promise<KeyAdminServer> {
  const principals = opts.principals ?? [LOCAL_KEY_ADMIN_PRINCIPAL];
  const answer = async (req: IncomingMessage, requestId: string): Promise<APIGatewayProxyResult> => {
    const body = await readBody(req);
    if (body === null) return { statusCode: 413, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'Request Too Long' }) };
    const target = req.url ?? '/';
    const method = req.method ?? 'GET';
    const verdict = await verifySigV4({ method, target, headers: req.headers, body }, principals, opts.clock());
    if (!verdict.ok) return denied(verdict.message);
    const pathname = target.split('?')[0]!;
    const match = matchKeyAdminPath(method, pathname);
    // API Gateway answers an unknown resource or method of an IAM-authorized API this way too.
    if (!match) return denied('Missing Authentication Token');
    const event = {
      resource: `${KEY_ADMIN_BASE_PATH}${match.route.path}`,
      path: pathname,
      httpMethod: method,
      headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')])),
      multiValueHeaders: {},
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: match.pathParameters,
      stageVariables: null,
      body: body === '' ? null : body,
      isBase64Encoded: false,
      requestContext: {
        requestId,
        httpMethod: method,
        resourcePath: `${KEY_ADMIN_BASE_PATH}${match.route.path}`,
        identity: {
          userArn: verdict.principal.principalArn,
          caller: verdict.principal.principalArn,
          accountId: verdict.principal.principalArn.split(':')[4] ?? null,
          accessKey: verdict.principal.accessKeyId,
          sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
          userAgent: req.headers['user-agent'] ?? null,
        },
      },
    } as unknown as APIGatewayProxyEvent; // only the fields the handler reads; the rest of API Gateway's event is irrelevant here
    return opts.handler(event);
  };
  const server: Server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, (req, res) => {
    const requestId = randomUUID();
    answer(req, requestId).then(
      (result) => send(res, result, requestId),
      () => send(res, { statusCode: 500, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'Internal server error' }) }, requestId),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${KEY_ADMIN_BASE_PATH}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
