/**
 * API Gateway's key calls over real HTTP: a loopback server speaking its
 * REST-JSON protocol for the calls key management makes, answered by the
 * rehearsal's in-memory key store (local/rehearsal/api-keys.ts), and a real
 * APIGatewayClient pointed at it. `refuse` makes an operation answer an error
 * as API Gateway does (status, x-amzn-errortype, a message) until it is
 * cleared, so the SDK's own deserialization makes the error the code sees.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { ApiKeyStore } from '../../local/rehearsal/api-keys.js';

export const PLAN_ID = 'plan0001';

/** What API Gateway answers for a refusal: its status and error type. */
export const REFUSALS = {
  TooManyRequestsException: 429,
  AccessDeniedException: 403,
} as const;
export type RefusalType = keyof typeof REFUSALS;

export interface ApiGatewayKeys {
  /** The SDK client: one attempt per call, so a refusal surfaces as the SDK throws it once its retries are used up. */
  client: APIGatewayClient;
  apiKeys: ApiKeyStore;
  /** Operation name (CreateApiKey, CreateUsagePlanKey, DeleteApiKey, GetApiKeys) → the refusal it answers for now. */
  refuse: Map<string, RefusalType>;
  /** Every call answered, in order: `operation status`. */
  calls: string[];
  close(): Promise<void>;
}

const bodyOf = async (req: IncomingMessage): Promise<Record<string, unknown>> => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
};

export async function startApiGatewayKeys(): Promise<ApiGatewayKeys> {
  const apiKeys = new ApiKeyStore([PLAN_ID]);
  const refuse = new Map<string, RefusalType>();
  const calls: string[] = [];
  const server = createServer((req, res) => {
    void bodyOf(req).then((body) => {
      const call = apiKeys.interpret('KeyAdmin', req.method ?? 'GET', req.url ?? '/', body);
      const refusal = call && refuse.get(call.operation);
      const out = !call
        ? { status: 400, errorType: 'BadRequestException', body: { message: `not interpreted: ${req.method} ${req.url}` } }
        : refusal
          ? { status: REFUSALS[refusal], errorType: refusal, body: { message: refusal === 'TooManyRequestsException' ? 'Too Many Requests' : 'not authorized' } }
          : call.run();
      calls.push(`${call?.operation ?? req.url} ${out.status}`);
      res.writeHead(out.status, { 'content-type': 'application/json', 'x-amzn-requestid': 'req-1', ...(out.errorType ? { 'x-amzn-errortype': out.errorType } : {}) });
      res.end(out.body ? JSON.stringify(out.body) : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = new APIGatewayClient({
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${port}`,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'example' },
    maxAttempts: 1,
  });
  return {
    client,
    apiKeys,
    refuse,
    calls,
    close: async () => {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
