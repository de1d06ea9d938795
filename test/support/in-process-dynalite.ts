/**
 * dynalite without the network: the same store code, called in-process
 * through the SDK's request-handler seam instead of over a loopback socket.
 * Every DynamoDB call still goes through the SDK's whole middleware stack
 * (serialisation, signing, retries, the tests' own middleware) and through
 * dynalite's whole HTTP handler (validation, the CRC header), so what a test
 * sees is what it would see over HTTP; only the sockets, the HTTP parsing
 * and the event-loop turns between them are gone. The schedule explorations
 * run on it (a schedule makes a few hundred calls: most of their time was
 * the loopback round trips).
 */
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import '../../local/level-iterators.js';
import { trackAnswers } from '../../local/dynalite.js';
import type { StoreCall } from './direct-dynalite.js';
import { rememberDynaliteParses } from './dynalite-parse-memo.js';

type Handler = (req: unknown, res: unknown) => void;
interface SdkRequest {
  method: string;
  path?: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

export interface InProcessStore {
  /** An endpoint the SDK needs to build requests; nothing listens on it. */
  endpoint: string;
  /** The same store over a loopback socket, for what must reach it over HTTP (a process, a client without the handler). */
  httpEndpoint: string;
  requestHandler: NonNullable<DynamoDBClientConfig['requestHandler']>;
  /** One operation straight to the same handler, as the protocol's JSON (test/support/direct-dynalite.ts). */
  call: StoreCall;
  close(): Promise<void>;
}

export async function startInProcessDynalite(): Promise<InProcessStore> {
  rememberDynaliteParses();
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  // Listening (on a loopback port) so that close() runs dynalite's whole shutdown: on a server that never listened it
  // stops at "not running" and leaves the store's handles open. The port also serves the same store over HTTP.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const handle = server.listeners('request')[0] as Handler;
  const answers = trackAnswers(server);
  const requestHandler = {
    handle: (request: SdkRequest) =>
      answers.track(new Promise<{ response: { statusCode: number; headers: Record<string, string>; body: Uint8Array } }>((resolve, reject) => {
        const req = Object.assign(new EventEmitter(), {
          method: request.method,
          url: request.path ?? '/',
          headers: Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k.toLowerCase(), v])),
        });
        const headers: Record<string, string> = {};
        const res = {
          statusCode: 200,
          contentType: undefined as string | undefined,
          setHeader: (name: string, value: unknown) => void (headers[name.toLowerCase()] = String(value)),
          end: (body?: string | Buffer) => resolve({ response: { statusCode: res.statusCode, headers, body: body === undefined ? new Uint8Array() : Buffer.from(body) } }),
        };
        try {
          handle(req, res);
          // A Uint8Array body's bytes as they are (Buffer.from(object) would go through its valueOf, a string).
          const body = request.body === undefined || typeof request.body === 'string' ? Buffer.from(request.body ?? '') : Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength);
          if (body.length) req.emit('data', body);
          req.emit('end');
        } catch (error) {
          reject(error as Error);
        }
      })),
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
    destroy: () => undefined,
  };
  // dynalite wants a signed request's headers (it checks they are there, not the signature).
  const headers = (operation: string) => ({
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': `DynamoDB_20120810.${operation}`,
    'x-amz-date': '20261126T000000Z',
    authorization: 'AWS4-HMAC-SHA256 Credential=local/20261126/local/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=0',
    host: 'in-process.invalid',
  });
  const call: StoreCall = async (operation, body) => {
    const { response } = await requestHandler.handle({ method: 'POST', path: '/', headers: headers(operation), body: JSON.stringify(body) });
    return { status: response.statusCode, json: JSON.parse(Buffer.from(response.body).toString('utf8') || '{}') as Record<string, unknown> };
  };
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: 'http://in-process.invalid',
    httpEndpoint: `http://127.0.0.1:${port}`,
    requestHandler: requestHandler as unknown as InProcessStore['requestHandler'],
    call,
    close: () => answers.closeWhenAnswered(),
  };
}
