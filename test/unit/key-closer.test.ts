/**
 * The ingest's invoke of the key-management function's close task
 * (lambdas/ingest/key-closer.ts) against a stand-in of Lambda's Invoke API:
 * the request it signs, and every answer that is not a success failing the
 * change (a function error, a refusal), a throttle as a throttle (the ingest
 * backs off). The real path, bundles and IAM, is test/rehearsal/key-admin.test.ts.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { invokeKeyCloser, KeyCloseFailed } from '../../lambdas/ingest/key-closer.js';
import { isThrottle } from '../../lambdas/store/table/throttling.js';

const ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:KeyAdminFunction';
let server: Server;
let endpoint: string;
let answer: { status: number; headers?: Record<string, string>; body: string } = { status: 200, body: '{}' };
const seen: { url: string; headers: IncomingMessage['headers']; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body });
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const close = () => invokeKeyCloser(ARN, { region: 'eu-west-1', endpoint, maxAttempts: 1, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } })('usr_alice', 1000);

it('invokes the function synchronously with the close task, signed for lambda in its region', async () => {
  answer = { status: 200, body: '{"task":"close","userId":"usr_alice"}' };
  await close();
  const request = seen.at(-1)!;
  expect(request.url).toBe(`/2015-03-31/functions/${encodeURIComponent(ARN)}/invocations`);
  expect(JSON.parse(request.body)).toEqual({ task: 'close', userId: 'usr_alice', version: 1000 });
  expect(request.headers['x-amz-invocation-type']).toBe('RequestResponse');
  expect(request.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/lambda\/aws4_request, /);
});

it('fails the change when the function failed (a 200 with X-Amz-Function-Error)', async () => {
  answer = { status: 200, headers: { 'x-amz-function-error': 'Unhandled' }, body: '{"errorType":"Error","errorMessage":"boom"}' };
  await expect(close()).rejects.toThrow(KeyCloseFailed);
  await expect(close()).rejects.toThrow(/Unhandled.*boom/);
});

it('fails the change when Lambda refused the invoke; a throttle is a throttle, an access denial is not', async () => {
  answer = { status: 429, headers: { 'x-amzn-errortype': 'TooManyRequestsException:' }, body: '{"Reason":"ReservedFunctionConcurrentInvocationLimitExceeded"}' };
  const throttled = await close().catch((e: unknown) => e);
  expect(throttled).toBeInstanceOf(KeyCloseFailed);
  expect(isThrottle(throttled)).toBe(true);
  answer = { status: 403, headers: { 'x-amzn-errortype': 'AccessDeniedException' }, body: '{"Message":"not authorized"}' };
  const denied = await close().catch((e: unknown) => e);
  expect(String(denied)).toContain('AccessDeniedException');
  expect(isThrottle(denied)).toBe(false);
});
