/**
 * The direct path (test/support/direct-dynalite.ts) over HTTP, for DynamoDB
 * Local: each operation POSTed as DynamoDB's JSON protocol carries it, on a
 * keep-alive connection, without the SDK's serialize, build, finalize and
 * deserialize steps. On DynamoDB Local those steps were about half of the
 * test process's CPU in an exploration (profiled on the triples, in band);
 * the store itself is unchanged, and so is lib-dynamodb's marshalling, which
 * the direct client still runs. DynamoDB Local reads the credentials' access
 * key and region from the Authorization header and checks no signature, so the
 * header names a fixed one.
 */
import { Agent, request } from 'node:http';
import type { StoreCall } from './direct-dynalite.js';

export interface HttpStoreCall {
  call: StoreCall;
  /** Ends the kept connections. */
  close(): void;
}

export function httpStoreCall(endpoint: string): HttpStoreCall {
  const url = new URL(endpoint);
  const agent = new Agent({ keepAlive: true });
  const call: StoreCall = (operation, body) => send(operation, JSON.stringify(body), true);
  /**
   * One POST. A kept connection the server closed while it sat idle fails with ECONNRESET before any answer,
   * the request almost surely unread; it is sent once more on a new connection, as Node's documentation advises
   * (`request.reusedSocket`) and as the SDK's standard retry strategy, which this path leaves out, would retry a
   * reset. Any other failure is the caller's, as before.
   */
  const send = (operation: string, payload: string, mayResend: boolean): ReturnType<StoreCall> =>
    new Promise((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: '/',
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/x-amz-json-1.0',
            'content-length': Buffer.byteLength(payload),
            'x-amz-target': `DynamoDB_20120810.${operation}`,
            'x-amz-date': '20260101T000000Z',
            authorization: 'AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0',
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            try {
              const text = Buffer.concat(chunks).toString('utf8');
              resolve({ status: res.statusCode ?? 0, json: (text ? JSON.parse(text) : {}) as Record<string, unknown> });
            } catch (error) {
              reject(error as Error);
            }
          });
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (mayResend && req.reusedSocket && error.code === 'ECONNRESET') send(operation, payload, false).then(resolve, reject);
        else reject(error);
      });
      req.end(payload);
    });
  return { call, close: () => agent.destroy() };
}
